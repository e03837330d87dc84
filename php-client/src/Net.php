<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/**
 * Net is what a transport's connections did so far: the connections it opened,
 * the TLS handshakes they completed (of them resumed), and what the last
 * handshake negotiated ("-" for what the library cannot tell: docs/clients.md).
 * A caller subtracts two of them around each measured call.
 */
final class Net
{
    public int $opened = 0;
    public int $handshakes = 0;
    public int $resumed = 0;
    /** TLSv1.3, TLSv1.2 or "-". */
    public string $version = '-';
    /** IANA name or "-". */
    public string $cipher = '-';
    /** Key-exchange group or "-". */
    public string $group = '-';
    /** The negotiated protocol, "none" for none, "-" when the library cannot tell. */
    public string $alpn = 'none';

    /** One connection opened; with $tls, its handshake completed. */
    public function open(bool $tls, bool $resumed = false): void
    {
        $this->opened++;
        if ($tls) {
            $this->handshakes++;
            if ($resumed) {
                $this->resumed++;
            }
        }
    }

    /** @return array{int, int, int} opened, handshakes, resumed */
    public function counts(): array
    {
        return [$this->opened, $this->handshakes, $this->resumed];
    }

    /** @return array{version: string, cipher: string, group: string, alpn: string} */
    public function negotiated(): array
    {
        return ['version' => $this->version, 'cipher' => $this->cipher, 'group' => $this->group, 'alpn' => $this->alpn];
    }
}
