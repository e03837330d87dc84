<?php
declare(strict_types=1);

namespace Rpcbed\Client\Tests;

use PHPUnit\Framework\TestCase;
use Rpcbed\Client\CallError;

/** Error kinds and ab's columns (docs/report-format.md, "Error kinds"). */
final class CallErrorTest extends TestCase
{
    public function testDeclaredErrorKinds(): void
    {
        // A DataError is the server's answer: never connect or timeout, whatever its code.
        $cases = [
            'unauthenticated' => [16, CallError::UNAUTHENTICATED],
            'invalid argument' => [3, CallError::INVALID_ARGUMENT],
            'unavailable, declared' => [14, CallError::EXCEPTIONS],
            'deadline exceeded, declared' => [4, CallError::EXCEPTIONS],
            'internal' => [13, CallError::EXCEPTIONS],
            'not found' => [5, CallError::EXCEPTIONS],
        ];
        foreach ($cases as $name => [$code, $want]) {
            $got = CallError::kindForStatus($code);
            $this->assertSame($want, $got, "$name: DataError $code: got $got; want $want");
            $this->assertFalse(CallError::isUnreachable($got), "$name: a declared error is not unreachable");
        }
    }

    public function testColumns(): void
    {
        $cases = [
            CallError::CONNECT => ['connect', false], CallError::RECEIVE => ['receive', false],
            CallError::TIMEOUT => ['receive', false], CallError::LENGTH => ['length', false],
            CallError::UNAUTHENTICATED => ['exceptions', true], CallError::INVALID_ARGUMENT => ['exceptions', true],
            CallError::EXCEPTIONS => ['exceptions', true],
        ];
        foreach ($cases as $kind => [$column, $non2xx]) {
            $this->assertSame($column, CallError::abColumn($kind), "$kind: ab column");
            $this->assertSame($non2xx, CallError::isErrorStatus($kind), "$kind: Non-2xx");
        }
    }
}
