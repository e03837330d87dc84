package rpcbed.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import org.apache.thrift.transport.TMemoryInputTransport;
import org.apache.thrift.transport.TTransportException;
import org.junit.jupiter.api.Test;

/** The server's framed transport: claimed sizes are checked, frames read as sent. */
class BoundedFramedTransportTest {
    private static TMemoryInputTransport wire(int claimed, byte[] body) throws TTransportException {
        return new TMemoryInputTransport(ByteBuffer.allocate(4 + body.length).putInt(claimed).put(body).array());
    }

    @Test
    void readsAFrameLargerThanTheFirstChunk() throws Exception {
        byte[] body = new byte[10_000];
        for (int i = 0; i < body.length; i++) {
            body[i] = (byte) i;
        }
        BoundedFramedTransport t = new BoundedFramedTransport(wire(body.length, body), 1 << 20);
        byte[] got = new byte[body.length];
        assertEquals(body.length, t.readAll(got, 0, got.length), "bytes read");
        assertArrayEquals(body, got, "frame content");
    }

    @Test
    void refusesAFrameAboveTheLimit() throws Exception {
        BoundedFramedTransport t = new BoundedFramedTransport(wire(64 << 20, new byte[8]), 1 << 20);
        TTransportException e = assertThrows(TTransportException.class, () -> t.read(new byte[4], 0, 4));
        assertEquals(TTransportException.CORRUPTED_DATA, e.getType(), "type: " + e.getMessage());
    }

    @Test
    void aCutFrameEndsWithoutItsClaim() throws Exception {
        BoundedFramedTransport t = new BoundedFramedTransport(wire(1 << 20, new byte[100]), 1 << 20);
        assertThrows(TTransportException.class, () -> t.read(new byte[4], 0, 4));
    }

    @Test
    void aStringLongerThanTheFrameIsRefused() throws Exception {
        BoundedFramedTransport t = new BoundedFramedTransport(wire(16, new byte[16]), 1 << 20);
        t.read(new byte[4], 0, 4);
        assertThrows(TTransportException.class, () -> t.checkReadBytesAvailable(1 << 30));
    }
}
