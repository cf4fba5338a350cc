// Pure unit tests of the error mapping: the API's {"error": {"code", "message"}} by status to its
// class, and the SDK's own errors for answers that are not the API's JSON and for no answer at all
// (a real local HTTP server that answers like a misconfigured proxy, and a port nobody listens on).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import {
  SigilClient, SigilError, errorFromResponse, errorClassForStatus, ErrorCode, InvalidRequestError, AuthenticationError,
  InsufficientCreditError, PermissionDeniedError, NotFoundError, ConflictError, PayloadTooLargeError, MalformedJsonError,
  RateLimitError, ServerError, UnavailableError, GatewayTimeoutError, NetworkError, InvalidResponseError, ClientError,
} from '@sigil/sdk';

test('each API status maps to its class, keeping the API code, message and request id', () => {
  for (const [status, Cls, code] of [
    [400, InvalidRequestError, 'typed_data_schema_mismatch'], [401, AuthenticationError, 'invalid_api_key'],
    [402, InsufficientCreditError, 'insufficient_credit'], [403, PermissionDeniedError, 'owner_only'],
    [404, NotFoundError, 'unknown_account'], [409, ConflictError, 'admin_taken'], [413, PayloadTooLargeError, 'payload_too_large'],
    [422, MalformedJsonError, 'malformed_json'], [429, RateLimitError, 'overloaded'], [500, ServerError, 'internal_error'],
    [502, UnavailableError, 'ipfs_unavailable'], [503, UnavailableError, 'chain_unavailable'], [504, GatewayTimeoutError, 'chain_timeout'],
  ]) {
    const e = errorFromResponse(status, JSON.stringify({ error: { code, message: `m ${code}` } }), 'rid-1');
    assert.ok(e instanceof Cls && e instanceof SigilError && e instanceof Error, `${status} -> ${Cls.name}`);
    assert.equal(errorClassForStatus(status), Cls);
    assert.equal(e.status, status);
    assert.equal(e.code, code);
    assert.equal(e.message, `m ${code}`);
    assert.equal(e.requestId, 'rid-1');
    assert.equal(e.name, Cls.name);
  }
  assert.equal(errorClassForStatus(599), ServerError);
  assert.equal(errorClassForStatus(418), SigilError);
});

test('Retry-After is kept on 429 and 503', () => {
  const e = errorFromResponse(503, '{"error":{"code":"chain_unavailable","message":"x"}}', null, new Headers({ 'Retry-After': '1' }));
  assert.equal(e.retryAfter, 1);
});

test('an error answer that is not the API JSON is an InvalidResponseError naming the status', () => {
  for (const text of ['<html><body>502 Bad Gateway</body></html>', '', '{"error":"flat"}', '{"error":{"code":1,"message":"x"}}', 'null']) {
    const e = errorFromResponse(502, text);
    assert.ok(e instanceof InvalidResponseError, text);
    assert.equal(e.status, 502);
    assert.equal(e.code, ErrorCode.INVALID_RESPONSE);
    assert.match(e.message, /HTTP 502/);
  }
});

test('over HTTP: an HTML page (even a 200) is InvalidResponseError, a closed port NetworkError', async () => {
  const server = createServer((req, res) => {
    const status = req.url.includes('ok') ? 200 : 502;
    res.writeHead(status, { 'Content-Type': 'text/html', 'X-Request-Id': 'r-42' });
    res.end('<html>proxy says no</html>');
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  try {
    const client = new SigilClient({ baseUrl: `http://127.0.0.1:${port}` });
    await assert.rejects(client.version(), (e) => e instanceof InvalidResponseError && e.status === 502 && e.requestId === 'r-42');
    await assert.rejects(client.request('GET', 'ok'), (e) => e instanceof InvalidResponseError && e.status === 200 && /not JSON/.test(e.message));
  } finally {
    await new Promise((r) => server.close(r));
  }
  const dead = new SigilClient({ baseUrl: `http://127.0.0.1:${port}` });
  await assert.rejects(dead.version(), (e) => e instanceof NetworkError && e.status === 0 && e.code === ErrorCode.NETWORK_ERROR && e.cause !== undefined);
});

test('the constructor refuses a missing base URL or fetch, and an unknown mode', () => {
  assert.throws(() => new SigilClient({}), ClientError);
  assert.throws(() => new SigilClient({ baseUrl: 'ftp://x' }), ClientError);
  assert.throws(() => new SigilClient({ baseUrl: 'https://x', fetch: null }), ClientError);
  assert.throws(() => new SigilClient({ baseUrl: 'https://x', mode: 'legacy' }), ClientError);
  assert.equal(new SigilClient({ baseUrl: 'https://x:1/core/v1/' }).baseUrl, 'https://x:1');
});
