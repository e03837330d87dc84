package rpcbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import rpcbed.core.DataService;
import rpcbed.core.ServiceError;
import rpcbed.core.Store;
import rpcbed.core.Tokens;
import rpcbed.server.HttpJsonServer;

class CoreTest {
    private static final byte[] SECRET = "rpcbed-test-secret".getBytes(StandardCharsets.UTF_8);

    @Test
    void tokenMatchesGo() {
        // internal/auth with this secret, clientId "java-client" and clock 1700000000.
        String got = new Tokens(SECRET).issue("java-client", 1_700_000_000L);
        assertEquals("AAAAAGVT81gH04ZIeuPLZZOnWTY", got, "token");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "fresh,      java-client, 0,    true",
        "other id,   someone,     0,    false",
        "expired,    java-client, 601,  false",
        "at expiry,  java-client, 600,  true",
    })
    void tokenValidity(String name, String clientId, long later, boolean want) {
        Tokens t = new Tokens(SECRET);
        String tok = t.issue("java-client", 1_000);
        assertEquals(want, t.valid(clientId, tok, 1_000 + later), name);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "garbage,   not-a-token",
        "short,     AAAAAGVT81gH04ZIeuPLZZOnWT",
        "padded,    AAAAAGVT81gH04ZIeuPLZZOnWTY=",
        "forged,    AAAAAGVT81gH04ZIeuPLZZOnWTZ",
    })
    void tokenRejected(String name, String token) {
        assertFalse(new Tokens(SECRET).valid("java-client", token, 1_000), name);
    }

    @Test
    void refreshRejectsForgedOnlyWithAuth() throws Exception {
        DataService on = new DataService(SECRET, true);
        DataService off = new DataService(SECRET, false);
        ServiceError e = org.junit.jupiter.api.Assertions.assertThrows(ServiceError.class,
            () -> on.refresh("c", "AAAAAGVT81gH04ZIeuPLZZOnWTZ"));
        assertEquals(ServiceError.UNAUTHENTICATED, e.code(), "code");
        assertEquals(Tokens.TOKEN_LEN, off.refresh("c", "forged").length(), "auth off: fresh token");
        assertEquals(Tokens.TOKEN_LEN, on.refresh("c", "").length(), "empty token: fresh token");
        String tok = on.refresh("c", "");
        assertEquals(Tokens.TOKEN_LEN, on.refresh("c", tok).length(), "valid token refreshed");
    }

    @Test
    void fillHappensOnce() throws Exception {
        DataService svc = new DataService(SECRET, true);
        int n = 100;
        ExecutorService pool = Executors.newFixedThreadPool(n);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Store.Rec>> got = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            got.add(pool.submit(() -> {
                go.await();
                return svc.dataType("USER_EVENT", "app_call_connect_success");
            }));
        }
        go.countDown();
        for (Future<Store.Rec> f : got) {
            Store.Rec r = f.get();
            assertEquals(101, r.codeId(), "codeId");
            assertEquals("名称-app_call_connect_success", r.cnName(), "cnName");
        }
        pool.shutdown();
        assertEquals(1, svc.store().writes(), "writes after 100 concurrent first calls");
    }

    /** As go-server's TestStringLimits: 256 bytes of UTF-8 at most, no '|' in a group. */
    @Test
    void stringLimits() throws Exception {
        DataService svc = new DataService(SECRET, false);
        String max = "x".repeat(DataService.MAX_STRING_BYTES);
        String han = "名".repeat(DataService.MAX_STRING_BYTES / 3); // 255 bytes in 85 chars
        assertEquals(DataService.CODE_ID, svc.dataType(max, max).codeId(), "at the limit");
        assertEquals(DataService.CODE_ID, svc.dataType(han, "b|c").codeId(), "multi-byte within the limit, '|' in the name");
        svc.refresh(max, "");
        String[][] bad = {
            {"group too long", max + "x", "e"}, {"name too long", "g", max + "x"},
            {"multi-byte too long", han + "名", "e"}, {"group with the key separator", "a|b", "c"},
        };
        for (String[] b : bad) {
            ServiceError e = org.junit.jupiter.api.Assertions.assertThrows(ServiceError.class, () -> svc.dataType(b[1], b[2]), b[0]);
            assertEquals(ServiceError.INVALID_ARGUMENT, e.code(), b[0]);
        }
        ServiceError e = org.junit.jupiter.api.Assertions.assertThrows(ServiceError.class, () -> svc.refresh(max + "x", ""));
        assertEquals(ServiceError.INVALID_ARGUMENT, e.code(), "client id too long");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"empty group, '', x", "empty name, USER_EVENT, ''"})
    void dataTypeInvalid(String name, String group, String en) {
        ServiceError e = org.junit.jupiter.api.Assertions.assertThrows(ServiceError.class,
            () -> new DataService(SECRET, true).dataType(group, en));
        assertEquals(ServiceError.INVALID_ARGUMENT, e.code(), name);
    }

    @ParameterizedTest(name = "n={0}")
    @CsvSource({"-1", "100001"})
    void itemsInvalid(int n) {
        assertThrows3(n);
    }

    private static void assertThrows3(int n) {
        ServiceError e = org.junit.jupiter.api.Assertions.assertThrows(ServiceError.class,
            () -> DataService.checkItems(n));
        assertEquals(ServiceError.INVALID_ARGUMENT, e.code(), "code");
    }

    @ParameterizedTest(name = "item {0}")
    @CsvSource({
        "0,     item-000001, 0.01,  true",
        "1,     item-000002, 0.38,  false",
        "270,   item-000271, 99.91, true",
        "99999, item-100000, 99.64, false",
    })
    void items(int i, String name, double score, boolean enabled) {
        assertEquals(i + 1L, DataService.itemId(i), "id");
        assertEquals(name, DataService.itemName(i), "name");
        assertEquals(score, DataService.itemScore(i), 1e-9, "score");
        assertEquals(enabled, DataService.itemEnabled(i), "enabled");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "127.0.0.1,  2130706433",
        "localhost,  2130706433",
        "127.1.2.3,  2130772483",
        "10.0.0.1,   10.0.0.1",
        "::1,        ::1",
        "127.0.0.x,  127.0.0.x",
    })
    void dubboLoopbackSafe(String host, String want) throws Exception {
        String got = rpcbed.server.DubboServer.loopbackSafe(host);
        assertEquals(want, got, host);
        if (host.startsWith("127.0.0.1") || host.equals("localhost")) {
            assertEquals("127.0.0.1", java.net.InetAddress.getByName(got).getHostAddress(), "Java resolves it back");
        }
    }

    @Test
    void dataListJsonAsGo() {
        // What go-server's encoding/json writes for n=2 (docs/contract.md).
        String want = "{\"code\":0,\"message\":\"ok\",\"auth\":{\"token\":\"T\"},\"n\":2,\"items\":["
            + "{\"id\":1,\"name\":\"item-000001\",\"createdAt\":0,\"score\":0.01,\"enabled\":true,"
            + "\"parentId\":0,\"note\":\"\",\"tags\":[]},"
            + "{\"id\":2,\"name\":\"item-000002\",\"createdAt\":0,\"score\":0.38,\"enabled\":false,"
            + "\"parentId\":0,\"note\":\"\",\"tags\":[]}]}\n";
        assertEquals(want, HttpJsonServer.dataListJson("T", 2));
    }

    @Test
    void scoreFormatting() {
        // Item 7027 scores exactly 100: Go prints it without ".0".
        assertTrue(HttpJsonServer.dataListJson("T", 7028).contains("\"score\":100,"), "100 without .0");
    }
}
