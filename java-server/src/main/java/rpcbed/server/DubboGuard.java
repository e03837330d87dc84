package rpcbed.server;

import java.net.InetSocketAddress;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.remoting.Channel;
import org.apache.dubbo.remoting.ChannelHandler;
import org.apache.dubbo.remoting.Dispatcher;
import org.apache.dubbo.remoting.RemotingException;
import org.apache.dubbo.remoting.exchange.Response;
import org.apache.dubbo.remoting.transport.ChannelHandlerDelegate;
import org.apache.dubbo.remoting.transport.dispatcher.direct.DirectDispatcher;

/**
 * Dubbo's "direct" dispatcher (handlers on the I/O thread) whose error replies carry a
 * status and one line of message, never a stack trace. Dubbo answers an undecodable
 * request with "Fail to decode request due to: " and the server's whole Java stack
 * trace (HeaderExchangeHandler; issue 18 #11). Registered as {@code rpcbed-guard} in
 * META-INF/dubbo/org.apache.dubbo.remoting.Dispatcher.
 */
public final class DubboGuard implements Dispatcher {
    public static final String NAME = "rpcbed-guard";
    /** The longest error message sent back. */
    static final int MAX_MESSAGE = 200;

    @Override
    public ChannelHandler dispatch(ChannelHandler handler, URL url) {
        return new Handler(new DirectDispatcher().dispatch(handler, url));
    }

    /** The first line of an error message, at most MAX_MESSAGE characters. */
    static String oneLine(String msg) {
        if (msg == null) {
            return null;
        }
        int nl = msg.indexOf('\n');
        String s = (nl >= 0 ? msg.substring(0, nl) : msg).strip();
        return s.length() > MAX_MESSAGE ? s.substring(0, MAX_MESSAGE) : s;
    }

    static final class Handler implements ChannelHandlerDelegate {
        private final ChannelHandler next;

        Handler(ChannelHandler next) {
            this.next = next;
        }

        @Override
        public ChannelHandler getHandler() {
            return next instanceof ChannelHandlerDelegate d ? d.getHandler() : next;
        }

        @Override
        public void connected(Channel ch) throws RemotingException {
            next.connected(new Guarded(ch));
        }

        @Override
        public void disconnected(Channel ch) throws RemotingException {
            next.disconnected(new Guarded(ch));
        }

        @Override
        public void sent(Channel ch, Object message) throws RemotingException {
            next.sent(new Guarded(ch), message);
        }

        @Override
        public void received(Channel ch, Object message) throws RemotingException {
            next.received(new Guarded(ch), message);
        }

        @Override
        public void caught(Channel ch, Throwable exception) throws RemotingException {
            next.caught(new Guarded(ch), exception);
        }
    }

    /** A channel whose error responses are cut to one line on the way out. */
    static final class Guarded implements Channel {
        private final Channel ch;

        Guarded(Channel ch) {
            this.ch = ch instanceof Guarded g ? g.ch : ch;
        }

        private static Object clean(Object message) {
            if (message instanceof Response r && r.getStatus() != Response.OK) {
                r.setErrorMessage(oneLine(r.getErrorMessage()));
            }
            return message;
        }

        @Override
        public void send(Object message) throws RemotingException {
            ch.send(clean(message));
        }

        @Override
        public void send(Object message, boolean sent) throws RemotingException {
            ch.send(clean(message), sent);
        }

        @Override
        public InetSocketAddress getRemoteAddress() {
            return ch.getRemoteAddress();
        }

        @Override
        public boolean isConnected() {
            return ch.isConnected();
        }

        @Override
        public boolean hasAttribute(String key) {
            return ch.hasAttribute(key);
        }

        @Override
        public Object getAttribute(String key) {
            return ch.getAttribute(key);
        }

        @Override
        public void setAttribute(String key, Object value) {
            ch.setAttribute(key, value);
        }

        @Override
        public void removeAttribute(String key) {
            ch.removeAttribute(key);
        }

        @Override
        public URL getUrl() {
            return ch.getUrl();
        }

        @Override
        public ChannelHandler getChannelHandler() {
            return ch.getChannelHandler();
        }

        @Override
        public InetSocketAddress getLocalAddress() {
            return ch.getLocalAddress();
        }

        @Override
        public void close() {
            ch.close();
        }

        @Override
        public void close(int timeout) {
            ch.close(timeout);
        }

        @Override
        public void startClose() {
            ch.startClose();
        }

        @Override
        public boolean isClosed() {
            return ch.isClosed();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Guarded g ? g.ch.equals(ch) : ch.equals(o);
        }

        @Override
        public int hashCode() {
            return ch.hashCode();
        }

        @Override
        public String toString() {
            return ch.toString();
        }
    }
}
