<?php
// The top-up service's signing for PHP merchants: sign requests, send them,
// verify callbacks. Only what PHP 8 ships with (hash, json; curl is not needed).
// Signing rules: docs/signing.md.

declare(strict_types=1);

const TOPUP_TIMESTAMP_TOLERANCE_SECONDS = 300;

/** Lowercase hex HMAC-SHA256 of timestamp, nonce, path and raw body, joined by line feeds. */
function topup_sign(string $appSecret, string $timestamp, string $nonce, string $path, string $body): string
{
    return hash_hmac('sha256', "{$timestamp}\n{$nonce}\n{$path}\n{$body}", $appSecret);
}

/**
 * One signed POST to /api/v2/...; returns [HTTP status, decoded reply].
 * Never throws for an HTTP error status: branch on the reply's `code`.
 */
function topup_call(string $baseUrl, string $apiKey, string $appSecret, string $path, array $payload): array
{
    // Serialise once; sign and send exactly these bytes. An empty array must still be an object.
    $body = $payload === [] ? '{}' : json_encode($payload, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR);
    $timestamp = (string) time();
    $nonce = bin2hex(random_bytes(16));
    $headers = [
        'Content-Type: application/json',
        "X-Api-Key: {$apiKey}",
        "X-Timestamp: {$timestamp}",
        "X-Nonce: {$nonce}",
        'X-Signature: ' . topup_sign($appSecret, $timestamp, $nonce, $path, $body),
    ];
    $context = stream_context_create(['http' => [
        'method' => 'POST',
        'header' => implode("\r\n", $headers),
        'content' => $body,
        'timeout' => 10,
        'ignore_errors' => true, // read the body of a 4xx/5xx too
    ]]);
    $reply = @file_get_contents(rtrim($baseUrl, '/') . $path, false, $context);
    if ($reply === false) {
        throw new RuntimeException("no reply from {$baseUrl}{$path}: " . (error_get_last()['message'] ?? 'unknown error'));
    }
    preg_match('{^HTTP/\S+ (\d{3})}', $http_response_header[0] ?? '', $status);
    return [(int) ($status[1] ?? 0), json_decode($reply, true) ?? []];
}

/**
 * Checks a callback: null when genuine, else the reason to refuse it.
 * $path is the path of the callback URL you configured; $rawBody the bytes as received.
 * $seenNonce(string $nonce): bool is asked only once the signature holds.
 */
function topup_verify_callback(string $appSecret, string $path, array $server, string $rawBody, callable $seenNonce, ?int $now = null): ?string
{
    $apiKey = $server['HTTP_X_API_KEY'] ?? '';
    $timestamp = $server['HTTP_X_TIMESTAMP'] ?? '';
    $nonce = $server['HTTP_X_NONCE'] ?? '';
    $signature = $server['HTTP_X_SIGNATURE'] ?? '';
    if ($apiKey === '' || $timestamp === '' || $nonce === '' || $signature === '') {
        return 'MISSING_HEADER';
    }
    $now ??= time();
    if (!preg_match('/^[0-9]{1,15}$/', $timestamp) || abs($now - (int) $timestamp) > TOPUP_TIMESTAMP_TOLERANCE_SECONDS) {
        return 'TIMESTAMP_EXPIRED';
    }
    if (!hash_equals(topup_sign($appSecret, $timestamp, $nonce, $path, $rawBody), $signature)) { // constant time
        return 'INVALID_SIGNATURE';
    }
    if ($seenNonce($nonce)) {
        return 'NONCE_REUSED';
    }
    return null;
}

/**
 * A nonce memory in a file, for one machine (several web server processes
 * share it through the lock). Several machines: use shared storage, e.g.
 * Redis SET nonce 1 NX EX 600.
 */
function topup_file_nonce_memory(string $file): callable
{
    return function (string $nonce) use ($file): bool {
        $handle = fopen($file, 'c+');
        flock($handle, LOCK_EX);
        $now = time();
        $seen = json_decode(stream_get_contents($handle) ?: '{}', true) ?: [];
        $seen = array_filter($seen, fn ($until) => $until > $now); // 10 minutes: twice the timestamp window
        $known = isset($seen[$nonce]);
        $seen[$nonce] = $seen[$nonce] ?? $now + 600;
        ftruncate($handle, 0);
        rewind($handle);
        fwrite($handle, json_encode($seen));
        flock($handle, LOCK_UN);
        fclose($handle);
        return $known;
    };
}

/** What the examples read from the environment, and what each is. */
const TOPUP_VARIABLES = [
    'TOPUP_BASE_URL' => 'the service, e.g. http://127.0.0.1:8080',
    'TOPUP_API_KEY' => 'your API key (npm run demo prints one)',
    'TOPUP_APP_SECRET' => 'your app secret (npm run demo prints one)',
    'TOPUP_CALLBACK_URL' => 'the callback URL the service has for you, e.g. http://127.0.0.1:3000/topup/callback',
];

/** One line for each of these variables that is unset or empty. */
function topup_missing_variables(array $names): array
{
    $missing = [];
    foreach ($names as $name) {
        if ((string) getenv($name) === '') {
            $missing[] = "missing {$name}: " . TOPUP_VARIABLES[$name];
        }
    }
    return $missing;
}
