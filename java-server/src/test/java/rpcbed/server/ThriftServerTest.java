package rpcbed.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.protocol.TMessage;
import org.apache.thrift.protocol.TMessageType;
import org.apache.thrift.protocol.TProtocol;
import org.apache.thrift.transport.TMemoryBuffer;
import org.apache.thrift.transport.TMemoryInputTransport;
import org.apache.thrift.transport.TSocket;
import org.apache.thrift.transport.layered.TFramedTransport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import rpcbed.core.DataService;
import rpcbed.core.Tokens;
import rpcbed.gen.thrift.Auth;
import rpcbed.gen.thrift.Data;
import rpcbed.gen.thrift.DataError;
import rpcbed.gen.thrift.DataListRequest;
import rpcbed.gen.thrift.DataTypeRequest;
import rpcbed.stats.CallStats;

/**
 * The Netty-served Thrift baseline over real sockets: the framed + binary wire of
 * libthrift's own client, and the limits of README "Limits" (frame claims, strings
 * longer than their frame, the idle cut, many frames in one write).
 */
class ThriftServerTest {
    /** The server of most cases: an idle timeout no case reaches on a loaded machine. */
    private ThriftServer server;
    /** A short idle timeout, for the cases about it (started by those). */
    private ThriftServer shortIdle;

    @BeforeEach
    void start() throws Exception {
        server = new ThriftServer(new DataService(Tokens.randomSecret(), false), "127.0.0.1", 0, 60_000);
    }

    @AfterEach
    void stop() {
        server.close();
        if (shortIdle != null) {
            shortIdle.close();
        }
    }

    private ThriftServer shortIdle() throws Exception {
        shortIdle = new ThriftServer(new DataService(Tokens.randomSecret(), false), "127.0.0.1", 0, 1500);
        return shortIdle;
    }

    /** One DataType request message, framed. */
    private static byte[] dataTypeFrame(int seq, String group) throws Exception {
        TMemoryBuffer buf = new TMemoryBuffer(256);
        TProtocol p = new TBinaryProtocol(buf);
        p.writeMessageBegin(new TMessage("DataType", TMessageType.CALL, seq));
        new Data.DataType_args(new DataTypeRequest(new Auth("c", ""), group, "e")).write(p);
        p.writeMessageEnd();
        return framed(buf);
    }

    /** One DataList(n) request message, framed. */
    private static byte[] dataListFrame(int seq, int n) throws Exception {
        TMemoryBuffer buf = new TMemoryBuffer(256);
        TProtocol p = new TBinaryProtocol(buf);
        p.writeMessageBegin(new TMessage("DataList", TMessageType.CALL, seq));
        new Data.DataList_args(new DataListRequest(new Auth("c", ""), n)).write(p);
        p.writeMessageEnd();
        return framed(buf);
    }

    private static byte[] framed(TMemoryBuffer buf) {
        return ByteBuffer.allocate(4 + buf.length()).putInt(buf.length()).put(buf.getArray(), 0, buf.length()).array();
    }

    /** Reads one reply frame, checks its sequence id and returns its result. */
    private static Data.DataType_result readReply(DataInputStream in, int wantSeq) throws Exception {
        int size = in.readInt();
        byte[] body = new byte[size];
        in.readFully(body);
        TProtocol p = new TBinaryProtocol(new TMemoryInputTransport(body));
        TMessage m = p.readMessageBegin();
        assertEquals(wantSeq, m.seqid, "reply sequence id");
        assertEquals(TMessageType.REPLY, m.type, "reply type");
        Data.DataType_result r = new Data.DataType_result();
        r.read(p);
        return r;
    }

    /** Whether the server closes s within millis (EOF or reset), dropping what it sends. */
    private static boolean closedWithin(Socket s, int millis) throws IOException {
        s.setSoTimeout(millis);
        InputStream in = s.getInputStream();
        try {
            while (in.read(new byte[4096]) >= 0) {
                // drop
            }
            return true;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true; // reset
        }
    }

    @Test
    void libthriftClientCalls() throws Exception {
        TSocket sock = new TSocket("127.0.0.1", server.port());
        sock.open();
        try {
            Data.Client c = new Data.Client(new TBinaryProtocol(new TFramedTransport(sock, ThriftServer.MAX_FRAME)));
            assertEquals(101, c.DataType(new DataTypeRequest(new Auth("c", ""), "g", "e")).getCodeId(), "codeId");
            assertEquals(5000, c.DataList(new DataListRequest(new Auth("c", ""), 5000)).getItemsSize(), "items");
            // DataList(100000) is a reply frame of about 8 MB: written past the high water mark.
            assertEquals(100000, c.DataList(new DataListRequest(new Auth("c", ""), 100000)).getItemsSize(), "items");
            try {
                c.DataList(new DataListRequest(new Auth("c", ""), 100001));
                throw new AssertionError("n = 100001 answered; want DataError 3");
            } catch (DataError e) {
                assertEquals(3, e.getCode(), "code");
            }
        } finally {
            sock.close();
        }
        assertEquals(1, server.calls().requests(CallStats.Call.DATATYPE), "datatype calls counted");
        assertEquals(3, server.calls().requests(CallStats.Call.DATALIST), "datalist calls counted");
    }

    @Test
    void framesInOneWriteAreAnsweredInOrder() throws Exception {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (int seq = 1; seq <= 50; seq++) {
            all.write(dataTypeFrame(seq, "g"));
        }
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(all.toByteArray());
            DataInputStream in = new DataInputStream(s.getInputStream());
            for (int seq = 1; seq <= 50; seq++) {
                assertEquals(101, readReply(in, seq).getSuccess().getCodeId(), "codeId of reply " + seq);
            }
        }
    }

    @Test
    void aFrameSentInPiecesIsAnswered() throws Exception {
        // A group name of 600 KiB: the frame arrives in many reads and is buffered as it
        // comes; the service refuses the name (at most 256 bytes) with DataError 3.
        byte[] frame = dataTypeFrame(7, "x".repeat(600 << 10));
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            s.setTcpNoDelay(true);
            for (int off = 0; off < frame.length; off += 16 << 10) {
                s.getOutputStream().write(frame, off, Math.min(16 << 10, frame.length - off));
                s.getOutputStream().flush();
            }
            Data.DataType_result r = readReply(new DataInputStream(s.getInputStream()), 7);
            assertEquals(3, r.getErr().getCode(), "DataError code");
        }
    }

    @Test
    void aFrameClaimAboveTheLimitCloses() throws Exception {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.getOutputStream().write(ByteBuffer.allocate(4).putInt(Limits.MAX_REQUEST + 1).array());
            assertTrue(closedWithin(s, 5000), "connection still open after a frame claiming MAX_REQUEST + 1");
        }
        assertServes();
    }

    @Test
    void aStringLongerThanItsFrameCloses() throws Exception {
        // A frame of a few bytes whose DataType request claims a 1 GiB group name.
        TMemoryBuffer buf = new TMemoryBuffer(64);
        TProtocol p = new TBinaryProtocol(buf);
        p.writeMessageBegin(new TMessage("DataType", TMessageType.CALL, 1));
        p.writeByte((byte) 12); // field 1 of the args: struct DataTypeRequest
        p.writeI16((short) 1);
        p.writeByte((byte) 11); // field 2 of the request: string groupName
        p.writeI16((short) 2);
        p.writeI32(1 << 30);
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.getOutputStream().write(framed(buf));
            assertTrue(closedWithin(s, 5000), "connection still open after a string claiming 1 GiB in a small frame");
        }
        assertServes();
    }

    @Test
    void idleAndHalfSentConnectionsAreCut() throws Exception {
        ThriftServer server = shortIdle();
        List<Socket> held = new ArrayList<>();
        try {
            Socket idle = new Socket("127.0.0.1", server.port());
            Socket half = new Socket("127.0.0.1", server.port());
            held.add(idle);
            held.add(half);
            half.getOutputStream().write(new byte[] {0, 0, 0x10, 0, (byte) 0x80, 1}); // claims 4 KiB, sends 2 bytes
            long start = System.nanoTime();
            assertTrue(closedWithin(idle, 10_000), "idle connection open 10 s after a 1.5 s idle timeout");
            assertTrue(closedWithin(half, 10_000), "half-sent frame's connection open 10 s after a 1.5 s idle timeout");
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertTrue(ms >= 1000, "cut after " + ms + " ms; want about the 1.5 s idle timeout");
        } finally {
            for (Socket s : held) {
                s.close();
            }
        }
        assertServes(server);
    }

    @Test
    void aCallerThatKeepsCallingKeepsItsConnection() throws Exception {
        ThriftServer server = shortIdle();
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(5000);
            DataInputStream in = new DataInputStream(s.getInputStream());
            for (int seq = 1; seq <= 8; seq++) { // 8 x 400 ms: past the 1.5 s idle timeout
                s.getOutputStream().write(dataTypeFrame(seq, "g"));
                assertEquals(101, readReply(in, seq).getSuccess().getCodeId(), "codeId");
                Thread.sleep(400);
            }
        }
    }

    @Test
    void aCallerThatStopsReadingIsCutAfterTheStall() throws Exception {
        // A long idle timeout: only the 1 s stall cut may close this connection.
        ThriftServer slow = new ThriftServer(new DataService(Tokens.randomSecret(), false), "127.0.0.1", 0, 60_000, 1000);
        try (Socket s = new Socket()) {
            s.setReceiveBufferSize(4096);
            s.connect(new InetSocketAddress("127.0.0.1", slow.port()));
            // About 8 MB of reply each, never read: more than loopback's buffers take here
            // (8 MB of one reply went into them), so reply bytes wait in the server.
            for (int seq = 1; seq <= 6; seq++) {
                s.getOutputStream().write(dataListFrame(seq, 100000));
            }
            Thread.sleep(4000); // 1-2 stall periods, and slack
            // Draining now gets what the kernel buffered, then the end: the server cut it.
            assertTrue(closedWithin(s, 10_000), "a caller that read nothing for 4 s still connected; want it cut after the 1 s stall");
        } finally {
            slow.close();
        }
    }

    @Test
    void aSlowReaderIsNotCut() throws Exception {
        ThriftServer slow = new ThriftServer(new DataService(Tokens.randomSecret(), false), "127.0.0.1", 0, 60_000, 1000);
        try (Socket s = new Socket()) {
            s.setReceiveBufferSize(64 << 10);
            s.connect(new InetSocketAddress("127.0.0.1", slow.port()));
            s.setSoTimeout(10_000);
            s.getOutputStream().write(dataListFrame(1, 100000));
            DataInputStream in = new DataInputStream(s.getInputStream());
            byte[] body = new byte[in.readInt()];
            // 1 MiB every 400 ms: slower than the server writes, never stalled for 1 s.
            for (int off = 0; off < body.length; off += 1 << 20) {
                in.readFully(body, off, Math.min(1 << 20, body.length - off));
                Thread.sleep(400);
            }
            TProtocol p = new TBinaryProtocol(new TMemoryInputTransport(body));
            p.readMessageBegin();
            Data.DataList_result r = new Data.DataList_result();
            r.read(p);
            assertEquals(100000, r.getSuccess().getItemsSize(), "items of a reply read slowly");
        } finally {
            slow.close();
        }
    }

    private void assertServes() throws Exception {
        assertServes(server);
    }

    private static void assertServes(ThriftServer server) throws Exception {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(5000);
            s.getOutputStream().write(dataTypeFrame(9, "g"));
            assertEquals(101, readReply(new DataInputStream(s.getInputStream()), 9).getSuccess().getCodeId(), "codeId");
        } catch (EOFException e) {
            throw new AssertionError("the server closed a normal call's connection", e);
        }
    }
}
