<?php
declare(strict_types=1);

namespace Rpcbed\Client;

/** HelpRequested is -h / -help: usage on stdout, exit 0 (docs/report-format.md). */
final class HelpRequested extends \InvalidArgumentException
{
}
