package rpcbed.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.alibaba.fastjson2.JSON;
import com.alibaba.fastjson2.JSONObject;
import org.junit.jupiter.api.Test;

/** GET /stats's document (docs/method.md section 10) and the /proc parsing under it. */
class StatsListenerTest {
    @Test
    void documentHasTheKeysTheDriverReads() {
        CallStats calls = new CallStats();
        calls.record(CallStats.Call.DATALIST, false);
        calls.record(CallStats.Call.DATALIST, true);
        calls.record(CallStats.Call.DATATYPE, false);
        try (StatsListener l = new StatsListener("127.0.0.1", 0, "rpcbed-java-thrift", "thrift", calls)) {
            double before = System.currentTimeMillis() / 1000.0;
            JSONObject o = JSON.parseObject(l.json());
            double after = System.currentTimeMillis() / 1000.0;
            assertEquals("rpcbed-java-thrift", o.getString("server"), "server");
            double t = o.getDoubleValue("time_unix_s");
            assertTrue(t >= before - 0.001 && t <= after + 0.001, "time_unix_s " + t + "; want " + before + " .. " + after);
            assertTrue(o.getDoubleValue("cpu_user_s") > 0, "cpu_user_s > 0");
            assertTrue(o.containsKey("cpu_system_s"), "cpu_system_s");
            // HotSpot monitors its JIT: the accumulated compile time so far, in ms.
            assertTrue(o.getLongValue("jit_compile_ms") > 0, "jit_compile_ms > 0: " + o.get("jit_compile_ms"));
            JSONObject thrift = o.getJSONObject("calls").getJSONObject("thrift");
            assertEquals(2, thrift.getJSONObject("datalist").getLongValue("requests"), "datalist requests");
            assertEquals(1, thrift.getJSONObject("datalist").getLongValue("errors"), "datalist errors");
            assertEquals(1, thrift.getJSONObject("datatype").getLongValue("requests"), "datatype requests");
            assertEquals(0, thrift.getJSONObject("datatype").getLongValue("errors"), "datatype errors");
        }
    }

    @Test
    void procStatFields() {
        // A command name with spaces and parentheses: fields count from the last ')'.
        String stat = "4242 (java (x) y) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 56 0 0 20 0 30 0 9 0 0";
        ProcessCpu c = ProcessCpu.parse(stat);
        assertEquals(12.34, c.user, 1e-9, "utime ticks -> seconds");
        assertEquals(0.56, c.system, 1e-9, "stime ticks -> seconds");
    }
}
