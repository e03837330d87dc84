<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/**
 * Verify checks a response against docs/contract.md. The full checks run once
 * before timing; the hot path only checks what the published client checked.
 */
final class Verify
{
    /** Item i (0-based) as the contract defines it. */
    public static function item(int $i): array
    {
        return [
            'id' => $i + 1, 'name' => sprintf('item-%06d', $i + 1), 'createdAt' => 0,
            'score' => (($i * 37) % 10000 + 1) / 100.0, 'enabled' => $i % 2 === 0,
            'parentId' => 0, 'note' => '', 'tags' => [],
        ];
    }

    /** @return ?string what is wrong, null when the reply is right */
    public static function dataType(Reply $r, string $enName): ?string
    {
        if ($r->codeId !== 101) {
            return "DataType: got codeId $r->codeId; want 101";
        }
        if ($r->cnName !== '名称-' . $enName) {
            return "DataType: got cnName \"$r->cnName\"; want \"名称-$enName\"";
        }
        if ($r->token === '') {
            return 'DataType: got no token';
        }
        return null;
    }

    /** @return ?string what is wrong, null when the reply is right */
    public static function dataList(Reply $r, int $n): ?string
    {
        if ($r->count !== $n) {
            return "DataList($n): got $r->count items; want $n";
        }
        if ($r->token === '') {
            return "DataList($n): got no token";
        }
        foreach (['first' => 0, 'last' => $n - 1] as $which => $i) {
            if ($n === 0) {
                break;
            }
            $got = $r->$which;
            $want = self::item($i);
            foreach ($want as $k => $v) {
                $g = $got[$k] ?? null;
                $same = is_float($v) ? is_numeric($g) && abs((float) $g - $v) < 1e-9 : $g === $v;
                if (!$same) {
                    return sprintf('DataList(%d): item %d: got %s %s; want %s', $n, $i, $k,
                        json_encode($g), json_encode($v));
                }
            }
        }
        return null;
    }
}
