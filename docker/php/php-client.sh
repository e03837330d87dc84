#!/bin/sh
# php-client: used only when php-client/ ships no wrapper of its own.
exec php -n /opt/rpcbed/php-client/bin/client.php "$@"
