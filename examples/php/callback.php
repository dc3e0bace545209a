<?php
// A PHP merchant's callback endpoint: verifies the service's signature before
// believing anything, then acknowledges with `success`. Run it under any web
// server; to try it: php -S 127.0.0.1:3000 examples/php/callback.php
//
//   TOPUP_APP_SECRET     your app secret (callbacks are signed with it)
//   TOPUP_CALLBACK_URL   the callback URL the service has for you: its path is signed
//   TOPUP_NONCE_FILE     where seen nonces are kept (default: the temp directory)

declare(strict_types=1);
require __DIR__ . '/topup.php';

$missing = topup_missing_variables(['TOPUP_APP_SECRET', 'TOPUP_CALLBACK_URL']);
if ($missing !== []) {
    // Without them no callback can be checked: refuse each, and say why in the server's log.
    file_put_contents('php://stderr', implode("\n", $missing) . "\nsee examples/README.md\n");
    http_response_code(500);
    exit;
}
if ($_SERVER['REQUEST_METHOD'] !== 'POST') {
    http_response_code(405);
    exit;
}
// The path you configured, not the request's: a proxy may have rewritten that.
$path = parse_url(getenv('TOPUP_CALLBACK_URL'), PHP_URL_PATH);
$rawBody = file_get_contents('php://input'); // the bytes as received; never re-encode before verifying
$nonces = topup_file_nonce_memory(getenv('TOPUP_NONCE_FILE') ?: sys_get_temp_dir() . '/topup-callback-nonces.json');

$refused = topup_verify_callback(getenv('TOPUP_APP_SECRET'), $path, $_SERVER, $rawBody, $nonces);
if ($refused !== null) {
    file_put_contents('php://stderr', "callback refused: {$refused}\n");
    http_response_code(401);
    exit;
}
$callback = json_decode($rawBody, true);
// Apply it idempotently by order_no: the same callback may come more than once.
file_put_contents('php://stderr', "callback: verified {$callback['order_no']} {$callback['status']}\n");
header('Content-Type: text/plain');
echo 'success';
