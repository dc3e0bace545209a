<?php
// A PHP merchant: submits a signed order and polls it until it is final.
// The callback for it arrives at callback.php (run it under a web server, e.g.
// php -S 127.0.0.1:3000 examples/php/callback.php).
//
//   TOPUP_BASE_URL, TOPUP_API_KEY, TOPUP_APP_SECRET   the service and your credentials
//   TOPUP_SKU_ID (default demo-gems-100), TOPUP_ACCOUNT_ID (default 12345678),
//   TOPUP_ACCOUNT_FIELDS (JSON object, default {"server_id":"2001"})
//   TOPUP_WAIT_SECONDS (how long to wait for the order to be final, default 60)

declare(strict_types=1);
require __DIR__ . '/topup.php';

$problems = topup_missing_variables(['TOPUP_BASE_URL', 'TOPUP_API_KEY', 'TOPUP_APP_SECRET']);
if (getenv('TOPUP_BASE_URL') && !preg_match('{^https?://}', getenv('TOPUP_BASE_URL'))) {
    $problems[] = 'TOPUP_BASE_URL must start with http:// or https:// (got ' . getenv('TOPUP_BASE_URL') . ')';
}
$accountFields = json_decode(getenv('TOPUP_ACCOUNT_FIELDS') ?: '{"server_id":"2001"}', true);
if (!is_array($accountFields) || array_is_list($accountFields) && $accountFields !== []) {
    $problems[] = 'TOPUP_ACCOUNT_FIELDS must be a JSON object, e.g. {"server_id":"2001"}';
}
$waitSeconds = getenv('TOPUP_WAIT_SECONDS') ?: '60';
if (!ctype_digit($waitSeconds)) {
    $problems[] = "TOPUP_WAIT_SECONDS must be a whole number of seconds (got {$waitSeconds})";
}
if ($problems !== []) {
    fwrite(STDERR, implode("\n", $problems) . "\nsee examples/README.md\n");
    exit(2);
}
$waitSeconds = (int) $waitSeconds;

$baseUrl = getenv('TOPUP_BASE_URL');
$apiKey = getenv('TOPUP_API_KEY');
$appSecret = getenv('TOPUP_APP_SECRET');

$order = [
    'out_trade_no' => 'php-' . bin2hex(random_bytes(6)), // your id; resubmit the same one when unsure
    'sku_id' => getenv('TOPUP_SKU_ID') ?: 'demo-gems-100',
    'account_id' => getenv('TOPUP_ACCOUNT_ID') ?: '12345678',
    'account_fields' => (object) $accountFields,
];
try {
    [$status, $reply] = topup_call($baseUrl, $apiKey, $appSecret, '/api/v2/topup/submit', $order);
} catch (RuntimeException $e) {
    fwrite(STDERR, "cannot reach the service ({$e->getMessage()}): is it running, and is TOPUP_BASE_URL right?\n");
    exit(1);
}
echo "submit: {$status} {$reply['code']}\n";
if (!($reply['success'] ?? false)) {
    fwrite(STDERR, json_encode($reply) . "\n");
    exit(1);
}
$orderNo = $reply['data']['order_no'];

echo "waiting: up to {$waitSeconds} s for {$orderNo} to be final (success or failed), asking every 0.5 s\n";
$started = microtime(true);
$nextNote = $started + 10;
while (true) {
    [$status, $reply] = topup_call($baseUrl, $apiKey, $appSecret, '/api/v2/topup/query', ['order_no' => $orderNo]);
    $state = ($reply['success'] ?? false) ? $reply['data']['status'] : null;
    if ($state === 'success' || $state === 'failed' || microtime(true) - $started >= $waitSeconds) {
        break;
    }
    if (microtime(true) >= $nextNote) {
        echo "waiting: {$orderNo} still {$state} after " . (int) (microtime(true) - $started) . " s\n";
        $nextNote += 10;
    }
    usleep(500_000);
}
echo "query: {$orderNo} {$state}\n";
if ($state !== 'success' && $state !== 'failed') {
    fwrite(STDERR, "gave up: {$orderNo} still {$state} after {$waitSeconds} s (an account ending in 999 is never answered upstream: reconciliation staff settle it)\n");
    exit(1);
}
echo "the callback for {$orderNo} goes to callback.php, at the URL the service has for you\n";
