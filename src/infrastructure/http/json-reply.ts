import type { ServerResponse } from 'node:http';

/**
 * Writes a JSON reply with res.json's headers but without Express's work
 * behind them: its ETag (a SHA-1 of the body) and freshness check serve
 * only a conditional GET, and its charset handling parses the Content-Type
 * it has just set. For every reply that is not a GET's success.
 */
export function sendJson(response: ServerResponse, status: number | undefined, body: unknown): void {
  if (status) response.statusCode = status;
  const json = JSON.stringify(body);
  response.setHeader('Content-Type', 'application/json; charset=utf-8');
  response.setHeader('Content-Length', Buffer.byteLength(json));
  response.end(json);
}
