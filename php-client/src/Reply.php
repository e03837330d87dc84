<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/**
 * Reply is what a transport hands back from one call, in one shape for every
 * protocol. Items are kept as counts plus the first and last item, enough to check
 * a response without walking it on the hot path.
 */
final class Reply
{
    /**
     * @param ?array<string, mixed> $first first item (id, name, createdAt, score, enabled, parentId, note, tags)
     * @param ?array<string, mixed> $last  last item, same keys
     * @param int $bytes encoded response body size, -1 when not measured
     */
    public function __construct(
        public readonly string $token,
        public readonly int $codeId = 0,
        public readonly string $cnName = '',
        public readonly int $count = 0,
        public readonly ?array $first = null,
        public readonly ?array $last = null,
        public readonly int $bytes = -1,
    ) {
    }
}
