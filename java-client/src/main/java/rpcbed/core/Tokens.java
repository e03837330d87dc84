package rpcbed.core;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The token of docs/contract.md: base64url (no padding) of 8 bytes big-endian expiry
 * (unix seconds) followed by the first 12 bytes of HMAC-SHA256(secret, clientId || expiry).
 */
public final class Tokens {
    public static final long TTL_SECONDS = 600;
    private static final int RAW_LEN = 20;
    /** Length of an encoded token: 20 bytes in unpadded base64url. */
    public static final int TOKEN_LEN = 27;
    private static final Base64.Encoder ENC = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder DEC = Base64.getUrlDecoder();

    private final SecretKeySpec key;
    // Mac is not thread safe and costly to create: one per thread.
    private final ThreadLocal<Mac> macs;

    public Tokens(byte[] secret) {
        this.key = new SecretKeySpec(secret.clone(), "HmacSHA256");
        this.macs = ThreadLocal.withInitial(this::newMac);
    }

    /** A secret for a server started without one: tokens then live as long as the process. */
    public static byte[] randomSecret() {
        byte[] b = new byte[32];
        new SecureRandom().nextBytes(b);
        return b;
    }

    private Mac newMac() {
        try {
            Mac m = Mac.getInstance("HmacSHA256");
            m.init(key);
            return m;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    public String issue(String clientId, long nowSeconds) {
        byte[] raw = new byte[RAW_LEN];
        ByteBuffer.wrap(raw).putLong(nowSeconds + TTL_SECONDS);
        System.arraycopy(sign(clientId, raw), 0, raw, 8, 12);
        return ENC.encodeToString(raw);
    }

    public boolean valid(String clientId, String token, long nowSeconds) {
        if (token.length() != TOKEN_LEN) {
            return false;
        }
        byte[] raw;
        try {
            raw = DEC.decode(token);
        } catch (IllegalArgumentException e) {
            return false;
        }
        // One spelling per token, as Go's strict decoder: unused low bits must be zero.
        if (raw.length != RAW_LEN || !ENC.encodeToString(raw).equals(token)) {
            return false;
        }
        long expiry = ByteBuffer.wrap(raw).getLong();
        if (expiry < nowSeconds) {
            return false;
        }
        byte[] want = sign(clientId, raw);
        byte[] got = new byte[12];
        System.arraycopy(raw, 8, got, 0, 12);
        byte[] want12 = new byte[12];
        System.arraycopy(want, 0, want12, 0, 12);
        return MessageDigest.isEqual(got, want12);
    }

    private byte[] sign(String clientId, byte[] raw) {
        Mac m = macs.get();
        m.update(clientId.getBytes(StandardCharsets.UTF_8));
        m.update(raw, 0, 8);
        return m.doFinal();
    }
}
