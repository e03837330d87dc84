<?php
declare(strict_types=1);

namespace Rpcbed\Client\Tests;

use PHPUnit\Framework\TestCase;
use Rpcbed\Client\Config;
use Rpcbed\Client\Net;
use Rpcbed\Client\Reply;
use Rpcbed\Client\Transport;
use Rpcbed\Client\Caller;

/** A transport whose every call completes when the test writes a line to its control pipe. */
final class SteppedTransport implements Transport
{
    public function __construct(private $control)
    {
    }

    public function dataType(string $groupName, string $enName, bool $measure = false): Reply
    {
        fgets($this->control);
        return new Reply('t', 101, '名称-' . $enName, 0, null, null, 10);
    }

    public function dataList(int $n, bool $measure = false): Reply
    {
        fgets($this->control);
        return new Reply('t', 0, '', $n, null, null, 10);
    }

    public function dataListItems(int $n): array
    {
        return [];
    }

    public function serverSoftware(): string
    {
        return '';
    }

    public function connection(): string
    {
        return 'new';
    }

    public function net(): Net
    {
        return new Net();
    }

    public function close(): void
    {
    }
}

/** One forked caller driven step by step, as Bench drives it (the window rules of docs/method.md). */
final class CallerTest extends TestCase
{
    /**
     * A call the caller was in when the start command came, which completes inside
     * the window, is measured: the caller reads commands after a call, before it
     * counts the call.
     */
    public function testCallInFlightAtStartIsMeasured(): void
    {
        $cfg = Config::parse(['-proto', 'http', '-call', 'datatype', '-n', '2', '-addr', '127.0.0.1:1']);
        [$parent, $child] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        [$ctlRead, $ctlWrite] = stream_socket_pair(STREAM_PF_UNIX, STREAM_SOCK_STREAM, STREAM_IPPROTO_IP);
        $pid = pcntl_fork();
        $this->assertNotSame(-1, $pid, 'fork');
        if ($pid === 0) {
            fclose($parent);
            fclose($ctlWrite);
            try {
                Caller::run($cfg, 1, $child, static fn (int $id): Transport => new SteppedTransport($ctlRead));
            } finally {
                posix_kill(getmypid(), 9); // not phpunit's shutdown in this copy
            }
        }
        fclose($child);
        fclose($ctlRead);
        try {
            fwrite($ctlWrite, "verify\n");
            $ready = json_decode((string) fgets($parent), true);
            $this->assertTrue($ready['ok'] ?? false, 'ready: ' . json_encode($ready));
            fwrite($parent, 'go ' . hrtime(true) . "\n");
            usleep(50_000); // the caller is now in its first warm-up call
            $t0 = hrtime(true);
            fwrite($parent, sprintf("start %d %d %d\n", $t0, $t0 + 60_000_000_000, 2));
            usleep(50_000);
            fwrite($ctlWrite, "first\nsecond\n"); // both complete after T0
            do {
                $m = json_decode((string) fgets($parent), true);
            } while (is_array($m) && $m['t'] === 'tick');
            $this->assertSame('result', $m['t'] ?? null, 'result: ' . json_encode($m));
            $this->assertSame(2, $m['calls'], 'got ' . $m['calls'] . ' measured calls; want 2 (the one in flight at start is measured)');
            $this->assertSame(0, $m['warmup'], 'warm-up calls');
            $this->assertCount(2, $m['lat']);
        } finally {
            fclose($parent);
            fclose($ctlWrite);
            pcntl_waitpid($pid, $status);
        }
    }
}
