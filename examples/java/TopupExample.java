// A Java merchant of the top-up service, JDK 17 only: run it with
//   java examples/java/TopupExample.java   (from the repository's root, as examples/README.md)
// Signs a request, submits an order, polls it until it is final, and receives
// and verifies the callback the service sends for it. Signing rules:
// docs/signing.md. A real application would use its JSON library (Jackson,
// Gson) where this file reads a few fields with a regular expression.
//
//   TOPUP_BASE_URL, TOPUP_API_KEY, TOPUP_APP_SECRET   the service and your credentials
//   TOPUP_CALLBACK_URL   your callback URL as the service has it; this program listens on its port
//   TOPUP_SKU_ID (default demo-gems-100), TOPUP_ACCOUNT_ID (default 12345678),
//   TOPUP_SERVER_ID (default 2001: the SKU's required account field)
//   TOPUP_WAIT_SECONDS (how long to wait for the order to be final, default 60)

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

public class TopupExample {
  static final long TIMESTAMP_TOLERANCE_SECONDS = 300;
  static final SecureRandom RANDOM = new SecureRandom();
  static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** Lowercase hex HMAC-SHA256 of timestamp, nonce, path and raw body, joined by line feeds. */
  static String sign(String appSecret, String timestamp, String nonce, String path, byte[] body) throws Exception {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(appSecret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
    mac.update((timestamp + "\n" + nonce + "\n" + path + "\n").getBytes(StandardCharsets.UTF_8));
    return HexFormat.of().formatHex(mac.doFinal(body));
  }

  static String newNonce() {
    byte[] bytes = new byte[16];
    RANDOM.nextBytes(bytes);
    return HexFormat.of().formatHex(bytes);
  }

  /** One signed POST; the reply whatever its status (branch on its "code"). */
  static HttpResponse<String> call(String baseUrl, String apiKey, String appSecret, String path, String json) throws Exception {
    byte[] body = json.getBytes(StandardCharsets.UTF_8); // sign and send exactly these bytes
    String timestamp = Long.toString(System.currentTimeMillis() / 1000);
    String nonce = newNonce();
    HttpRequest request = HttpRequest.newBuilder(URI.create(baseUrl + path))
        .timeout(Duration.ofSeconds(10))
        .header("Content-Type", "application/json")
        .header("X-Api-Key", apiKey)
        .header("X-Timestamp", timestamp)
        .header("X-Nonce", nonce)
        .header("X-Signature", sign(appSecret, timestamp, nonce, path, body))
        .POST(HttpRequest.BodyPublishers.ofByteArray(body))
        .build();
    return HTTP.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
  }

  /** Nonces seen in the last 10 minutes (a replay cannot outlive the 300 s window either side). */
  static final Map<String, Long> SEEN_NONCES = new ConcurrentHashMap<>();

  static boolean seenNonce(String nonce) {
    long now = System.currentTimeMillis();
    SEEN_NONCES.values().removeIf(until -> until < now);
    return SEEN_NONCES.putIfAbsent(nonce, now + 600_000) != null;
  }

  /** Null when the callback is genuine, else the reason to refuse it. */
  static String verifyCallback(String appSecret, String path, HttpExchange exchange, byte[] rawBody) throws Exception {
    String apiKey = single(exchange, "X-Api-Key");
    String timestamp = single(exchange, "X-Timestamp");
    String nonce = single(exchange, "X-Nonce");
    String signature = single(exchange, "X-Signature");
    if (apiKey == null || timestamp == null || nonce == null || signature == null) return "MISSING_HEADER";
    if (!timestamp.matches("[0-9]{1,15}")
        || Math.abs(System.currentTimeMillis() / 1000.0 - Long.parseLong(timestamp)) > TIMESTAMP_TOLERANCE_SECONDS) {
      return "TIMESTAMP_EXPIRED";
    }
    byte[] expected = sign(appSecret, timestamp, nonce, path, rawBody).getBytes(StandardCharsets.UTF_8);
    if (!MessageDigest.isEqual(expected, signature.getBytes(StandardCharsets.UTF_8))) return "INVALID_SIGNATURE"; // constant time
    if (seenNonce(nonce)) return "NONCE_REUSED"; // only once the signature holds
    return null;
  }

  /** A header sent exactly once, else null: never guess which copy was signed. */
  static String single(HttpExchange exchange, String name) {
    var values = exchange.getRequestHeaders().get(name);
    return values != null && values.size() == 1 ? values.get(0) : null;
  }

  static String field(String json, String name) {
    Matcher m = Pattern.compile("\"" + Pattern.quote(name) + "\"\\s*:\\s*\"([^\"\\\\]*)\"").matcher(json);
    return m.find() ? m.group(1) : null;
  }

  /** What is missing or malformed in the environment, one line each. */
  static List<String> environmentProblems(Map<String, String> env) {
    Map<String, String> required = new LinkedHashMap<>();
    required.put("TOPUP_BASE_URL", "the service, e.g. http://127.0.0.1:8080");
    required.put("TOPUP_API_KEY", "your API key (npm run demo prints one)");
    required.put("TOPUP_APP_SECRET", "your app secret (npm run demo prints one)");
    required.put("TOPUP_CALLBACK_URL", "the callback URL the service has for you, e.g. http://127.0.0.1:3000/topup/callback");
    List<String> problems = new ArrayList<>();
    required.forEach((name, what) -> {
      if (env.getOrDefault(name, "").isEmpty()) problems.add("missing " + name + ": " + what);
    });
    String base = env.getOrDefault("TOPUP_BASE_URL", "");
    if (!base.isEmpty() && !base.matches("https?://.+")) problems.add("TOPUP_BASE_URL must start with http:// or https:// (got " + base + ")");
    String callback = env.getOrDefault("TOPUP_CALLBACK_URL", "");
    if (!callback.isEmpty()) {
      URI uri = null;
      try {
        uri = URI.create(callback);
      } catch (IllegalArgumentException e) {
        // reported below
      }
      if (uri == null || !"http".equals(uri.getScheme()) || uri.getHost() == null || uri.getPort() < 0) {
        problems.add("TOPUP_CALLBACK_URL must be http://host:port/path, with the port to listen on (got " + callback + ")");
      }
    }
    String wait = env.getOrDefault("TOPUP_WAIT_SECONDS", "60");
    if (!wait.matches("[0-9]{1,6}")) problems.add("TOPUP_WAIT_SECONDS must be a whole number of seconds (got " + wait + ")");
    return problems;
  }

  public static void main(String[] args) throws Exception {
    List<String> problems = environmentProblems(System.getenv());
    if (!problems.isEmpty()) {
      problems.forEach(System.err::println);
      System.err.println("see examples/README.md");
      System.exit(2);
    }
    long waitSeconds = Long.parseLong(System.getenv().getOrDefault("TOPUP_WAIT_SECONDS", "60"));
    String baseUrl = System.getenv("TOPUP_BASE_URL").replaceAll("/$", "");
    String apiKey = System.getenv("TOPUP_API_KEY");
    String appSecret = System.getenv("TOPUP_APP_SECRET");
    URI callbackUrl = URI.create(System.getenv("TOPUP_CALLBACK_URL"));
    String callbackPath = callbackUrl.getPath(); // the path you configured is what the service signs

    Map<String, String> callbacks = new ConcurrentHashMap<>(); // order_no -> status
    CountDownLatch arrived = new CountDownLatch(1);
    HttpServer server;
    try {
      server = HttpServer.create(new InetSocketAddress(callbackUrl.getHost(), callbackUrl.getPort()), 0);
    } catch (IOException e) {
      System.err.println("cannot listen for callbacks on " + callbackUrl.getHost() + ":" + callbackUrl.getPort() + " (TOPUP_CALLBACK_URL): " + e.getMessage());
      System.exit(1);
      return;
    }
    server.createContext(callbackPath, exchange -> {
      try (exchange) {
        byte[] rawBody = exchange.getRequestBody().readAllBytes(); // the bytes as received
        String refused = "POST".equals(exchange.getRequestMethod()) ? verifyCallback(appSecret, callbackPath, exchange, rawBody) : "NOT_POST";
        if (refused != null) {
          System.out.println("callback refused: " + refused);
          exchange.sendResponseHeaders(401, -1);
          return;
        }
        String body = new String(rawBody, StandardCharsets.UTF_8);
        callbacks.put(field(body, "order_no"), field(body, "status")); // apply idempotently by order_no
        byte[] ack = "success".getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "text/plain");
        exchange.sendResponseHeaders(200, ack.length);
        exchange.getResponseBody().write(ack);
        arrived.countDown();
      } catch (Exception e) {
        throw new IOException(e);
      }
    });
    server.start();

    String outTradeNo = "java-" + newNonce().substring(0, 12);
    String sku = System.getenv().getOrDefault("TOPUP_SKU_ID", "demo-gems-100");
    String account = System.getenv().getOrDefault("TOPUP_ACCOUNT_ID", "12345678");
    String serverId = System.getenv().getOrDefault("TOPUP_SERVER_ID", "2001");
    String order = String.format(
        "{\"out_trade_no\":\"%s\",\"sku_id\":\"%s\",\"account_id\":\"%s\",\"account_fields\":{\"server_id\":\"%s\"}}",
        outTradeNo, sku, account, serverId);
    HttpResponse<String> submitted;
    try {
      submitted = call(baseUrl, apiKey, appSecret, "/api/v2/topup/submit", order);
    } catch (IOException e) {
      System.err.println("cannot reach the service at " + baseUrl + " (" + (e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName()) + "): is it running, and is TOPUP_BASE_URL right?");
      System.exit(1);
      return;
    }
    System.out.println("submit: " + submitted.statusCode() + " " + field(submitted.body(), "code"));
    String orderNo = field(submitted.body(), "order_no");
    if (!submitted.body().contains("\"success\":true") || orderNo == null) {
      System.err.println(submitted.body());
      System.exit(1);
    }

    System.out.println("waiting: up to " + waitSeconds + " s for " + orderNo + " to be final (success or failed), asking every 0.5 s");
    String state = null;
    long started = System.currentTimeMillis();
    for (long nextNote = started + 10_000; ; Thread.sleep(500)) {
      HttpResponse<String> queried = call(baseUrl, apiKey, appSecret, "/api/v2/topup/query", "{\"order_no\":\"" + orderNo + "\"}");
      state = queried.body().contains("\"success\":true") ? field(queried.body(), "status") : null;
      if ("success".equals(state) || "failed".equals(state) || System.currentTimeMillis() - started >= waitSeconds * 1000) break;
      if (System.currentTimeMillis() >= nextNote) {
        System.out.println("waiting: " + orderNo + " still " + state + " after " + (System.currentTimeMillis() - started) / 1000 + " s");
        nextNote += 10_000;
      }
    }
    System.out.println("query: " + orderNo + " " + state);
    if (!"success".equals(state) && !"failed".equals(state)) {
      System.err.println("gave up: " + orderNo + " still " + state + " after " + waitSeconds
          + " s (an account ending in 999 is never answered upstream: reconciliation staff settle it)");
      System.exit(1);
    }

    System.out.println("waiting: up to 30 s for the callback for " + orderNo + " at " + callbackUrl);
    if (!arrived.await(30, TimeUnit.SECONDS) || !callbacks.containsKey(orderNo)) {
      System.err.println("no callback for " + orderNo + " within 30 s");
      System.exit(1);
    }
    System.out.println("callback: verified " + orderNo + " " + callbacks.get(orderNo));
    server.stop(0);
  }
}
