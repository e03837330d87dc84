package rpcbed.dubbo;

import java.io.Serializable;

/**
 * The Dubbo service: a Java interface mirroring the contract (idl/ has no Dubbo IDL),
 * with plain serializable types carried by hessian2 over the dubbo protocol.
 */
public final class Api {
    private Api() {}

    /** The service, exported as {@code rpcbed.dubbo.Api$Data}. */
    public interface Data {
        DataTypeResponse dataType(DataTypeRequest req) throws DataError;

        DataListResponse dataList(DataListRequest req) throws DataError;
    }

    public static class Auth implements Serializable {
        private static final long serialVersionUID = 1L;
        public String clientId = "";
        public String token = "";

        public Auth() {}

        public Auth(String clientId, String token) {
            this.clientId = clientId;
            this.token = token;
        }
    }

    public static class AuthReply implements Serializable {
        private static final long serialVersionUID = 1L;
        public String token = "";

        public AuthReply() {}

        public AuthReply(String token) {
            this.token = token;
        }
    }

    public static class DataTypeRequest implements Serializable {
        private static final long serialVersionUID = 1L;
        public Auth auth;
        public String groupName = "";
        public String enName = "";
    }

    public static class DataTypeResponse implements Serializable {
        private static final long serialVersionUID = 1L;
        public AuthReply auth;
        public long codeId;
        public String cnName = "";
    }

    public static class DataListRequest implements Serializable {
        private static final long serialVersionUID = 1L;
        public Auth auth;
        public int n;
    }

    public static class Item implements Serializable {
        private static final long serialVersionUID = 1L;
        public long id;
        public String name = "";
        public long createdAt;
        public double score;
        public boolean enabled;
        public long parentId;
        public String note = "";
        public String[] tags = new String[0];
    }

    public static class DataListResponse implements Serializable {
        private static final long serialVersionUID = 1L;
        public AuthReply auth;
        public Item[] items = new Item[0];
    }

    /** The declared error; code mirrors the gRPC status codes (3, 13, 16). */
    public static class DataError extends Exception {
        private static final long serialVersionUID = 1L;
        public int code;

        public DataError() {}

        public DataError(int code, String message) {
            // No stack trace: hessian2 would carry the server's frames to every caller.
            super(message, null, false, false);
            this.code = code;
        }
    }
}
