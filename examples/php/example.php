<?php
// A PHP merchant: submits a signed order and polls it until it is final.
// The callback for it arrives at callback.php (run it under a web server, e.g.
// php -S 127.0.0.1:3000 callback.php).
//
//   TOPUP_BASE_URL, TOPUP_API_KEY, TOPUP_APP_SECRET   the service and your credentials
//   TOPUP_SKU_ID (default demo-gems-100), TOPUP_ACCOUNT_ID (default 12345678),
//   TOPUP_ACCOUNT_FIELDS (JSON object, default {"server_id":"2001"})

declare(strict_types=1);
require __DIR__ . '/topup.php';

$baseUrl = getenv('TOPUP_BASE_URL');
$apiKey = getenv('TOPUP_API_KEY');
$appSecret = getenv('TOPUP_APP_SECRET');

$order = [
    'out_trade_no' => 'php-' . bin2hex(random_bytes(6)), // your id; resubmit the same one when unsure
    'sku_id' => getenv('TOPUP_SKU_ID') ?: 'demo-gems-100',
    'account_id' => getenv('TOPUP_ACCOUNT_ID') ?: '12345678',
    'account_fields' => (object) json_decode(getenv('TOPUP_ACCOUNT_FIELDS') ?: '{"server_id":"2001"}', true),
];
[$status, $reply] = topup_call($baseUrl, $apiKey, $appSecret, '/api/v2/topup/submit', $order);
echo "submit: {$status} {$reply['code']}\n";
if (!($reply['success'] ?? false)) {
    fwrite(STDERR, json_encode($reply) . "\n");
    exit(1);
}
$orderNo = $reply['data']['order_no'];

$deadline = time() + 60;
do {
    [$status, $reply] = topup_call($baseUrl, $apiKey, $appSecret, '/api/v2/topup/query', ['order_no' => $orderNo]);
    $state = ($reply['success'] ?? false) ? $reply['data']['status'] : null;
    if ($state === 'success' || $state === 'failed') {
        break;
    }
    usleep(500_000);
} while (time() < $deadline);
echo "query: {$orderNo} {$state}\n";
exit($state === 'success' || $state === 'failed' ? 0 : 1);
