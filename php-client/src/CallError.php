<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/**
 * CallError is one failed call, already sorted into the report's error kinds:
 * connect, receive, timeout, length, exceptions, unauthenticated, invalid_argument
 * (go-client's kinds).
 */
final class CallError extends \RuntimeException
{
    public const CONNECT = 'connect';
    public const RECEIVE = 'receive';
    public const TIMEOUT = 'timeout';
    public const LENGTH = 'length';
    public const EXCEPTIONS = 'exceptions';
    public const UNAUTHENTICATED = 'unauthenticated';
    public const INVALID_ARGUMENT = 'invalid_argument';

    public function __construct(public readonly string $kind, string $message, ?\Throwable $previous = null)
    {
        parent::__construct($message, 0, $previous);
    }

    /** The column of ab's "(Connect: , Receive: , Length: , Exceptions: )" line. */
    public static function abColumn(string $kind): string
    {
        return match ($kind) {
            self::CONNECT => 'connect',
            self::RECEIVE, self::TIMEOUT => 'receive',
            self::LENGTH => 'length',
            default => 'exceptions',
        };
    }

    /** Whether the server answered with an error status (ab's "Non-2xx responses"). */
    public static function isErrorStatus(string $kind): bool
    {
        return $kind === self::EXCEPTIONS || $kind === self::UNAUTHENTICATED || $kind === self::INVALID_ARGUMENT;
    }

    /** Whether the server answered at all: such calls count in the latency figures. */
    public static function answered(string $kind): bool
    {
        return !self::isUnreachable($kind);
    }

    /** Whether the kind means the server could not be reached at all. */
    public static function isUnreachable(string $kind): bool
    {
        return $kind === self::CONNECT || $kind === self::TIMEOUT || $kind === self::RECEIVE;
    }

    /**
     * The kind for a Thrift/Ice DataError.code: a declared error, so the server
     * answered and it is never connect or timeout, whatever the code (14 and 4 too;
     * docs/report-format.md).
     */
    public static function kindForStatus(int $code): string
    {
        return match ($code) {
            16 => self::UNAUTHENTICATED,
            3 => self::INVALID_ARGUMENT,
            default => self::EXCEPTIONS,
        };
    }
}
