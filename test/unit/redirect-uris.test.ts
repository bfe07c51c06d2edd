/**
 * Redirect URIs are matched exactly (OAuth 2.1; RFC 9700 §4.1): every trick that makes
 * the registered text and the URL a browser follows differ is refused, against the
 * default connector allow-list (one wildcard entry) and the loopback rule.
 */
import { describe, expect, it } from 'vitest';
import { parseRedirectUri, redirectAllowed, redirectMatches } from '../../lambdas/oauth/redirect-uris.ts';
import { OAUTH_CONNECTOR_CALLBACKS } from '../../lambdas/config/settings.ts';

const allowed = (uri: string) => redirectAllowed(uri, OAUTH_CONNECTOR_CALLBACKS);

describe('redirect URIs', () => {
  it.each([
    'https://claude.ai/api/mcp/auth_callback',
    'https://claude.com/api/mcp/auth_callback',
    'https://chatgpt.com/connector_platform_oauth_redirect',
    'https://chatgpt.com/connector/oauth/abc123',
    'https://chatgpt.com/connector/oauth/abc/def',
    'http://127.0.0.1:33418/callback',
    'http://localhost:8080/oauth/callback',
    'http://[::1]:9000/cb',
    'http://127.0.0.1/callback',
    'http://localhost:6274',
  ])('allows %s', (uri) => {
    expect(allowed(uri)).toBe(true);
  });

  it.each([
    // The reported escape, and its spellings: dot-segments, encoded dots, backslashes.
    ['dot-segments out of the wildcard path', 'https://chatgpt.com/connector/oauth/../../evil-path?x=1'],
    ['dot-segments without a query', 'https://chatgpt.com/connector/oauth/../../evil-path'],
    ['one dot-segment up', 'https://chatgpt.com/connector/oauth/../evil'],
    ['a single-dot segment', 'https://chatgpt.com/connector/oauth/./x'],
    ['encoded dots', 'https://chatgpt.com/connector/oauth/%2e%2e/%2e%2e/evil'],
    ['upper-case encoded dots', 'https://chatgpt.com/connector/oauth/%2E%2E/evil'],
    ['half-encoded dots', 'https://chatgpt.com/connector/oauth/.%2e/evil'],
    ['a backslash', 'https://chatgpt.com/connector/oauth/..\\..\\evil'],
    ['an encoded backslash', 'https://chatgpt.com/connector/oauth/..%5c..%5cevil'],
    ['an encoded slash', 'https://chatgpt.com/connector/oauth/..%2f..%2fevil'],
    ['an encoded NUL', 'https://chatgpt.com/connector/oauth/x%00'],
    ['a double slash that resolves elsewhere', 'https://chatgpt.com/connector/oauth//../../evil'],
    // The wildcard is a path, not a string prefix.
    ['the wildcard entry itself (no segment below it)', 'https://chatgpt.com/connector/oauth/'],
    ['a sibling path sharing the prefix text', 'https://chatgpt.com/connector/oauthx/steal'],
    ['a query under the wildcard', 'https://chatgpt.com/connector/oauth/cb?next=https://evil.example'],
    ['a fragment', 'https://chatgpt.com/connector/oauth/cb#frag'],
    ['an empty fragment', 'https://claude.ai/api/mcp/auth_callback#'],
    // Hosts and authorities.
    ['credentials before the host', 'https://chatgpt.com@evil.example/connector/oauth/x'],
    ['credentials that look like the host', 'https://evil.example@chatgpt.com/connector/oauth/x'],
    ['a look-alike host', 'https://chatgpt.com.evil.example/connector/oauth/x'],
    ['another port', 'https://chatgpt.com:8443/connector/oauth/x'],
    ['the default port written out', 'https://chatgpt.com:443/connector/oauth/x'],
    ['an upper-case host', 'https://ChatGPT.com/connector/oauth/x'],
    ['an upper-case scheme', 'HTTPS://chatgpt.com/connector/oauth/x'],
    ['a trailing dot on the host', 'https://chatgpt.com./connector/oauth/x'],
    ['http for a public host', 'http://chatgpt.com/connector/oauth/x'],
    ['another scheme', 'javascript://chatgpt.com/connector/oauth/%0aalert(1)'],
    ['a custom scheme', 'com.evil.app:/callback'],
    // Exact entries are exact.
    ['an exact entry with a trailing slash', 'https://claude.ai/api/mcp/auth_callback/'],
    ['an exact entry with a query', 'https://claude.ai/api/mcp/auth_callback?x=1'],
    ['an exact entry with a path below it', 'https://claude.ai/api/mcp/auth_callback/x'],
    ['an exact entry in another case', 'https://claude.ai/api/mcp/Auth_Callback'],
    ['an exact entry with dot-segments that resolve to it', 'https://claude.ai/api/x/../mcp/auth_callback'],
    // Whitespace and control characters.
    ['a leading space', ' https://claude.ai/api/mcp/auth_callback'],
    ['a trailing newline', 'https://claude.ai/api/mcp/auth_callback\n'],
    ['a tab inside', 'https://claude.ai/api/mcp/auth\t_callback'],
    // Loopback: any port, the path exact, nothing else.
    ['a loopback with credentials', 'http://user:pw@127.0.0.1:3000/cb'],
    ['a loopback with a fragment', 'http://127.0.0.1:3000/cb#x'],
    ['a loopback with a query', 'http://127.0.0.1:3000/cb?next=https://evil.example'],
    ['a loopback with dot-segments', 'http://127.0.0.1:3000/a/../cb'],
    ['a loopback written in decimal', 'http://2130706433:3000/cb'],
    ['a loopback written in hex', 'http://0x7f.0.0.1:3000/cb'],
    ['another loopback address', 'http://127.0.0.2:3000/cb'],
    ['a name that only resolves to loopback', 'http://localhost.evil.example:3000/cb'],
    ['https to a loopback IP with an odd spelling', 'https://0177.0.0.1/cb'],
    ['not a URL', 'not a url'],
    ['empty', ''],
    ['too long', `https://chatgpt.com/connector/oauth/${'a'.repeat(600)}`],
  ])('refuses %s', (_why, uri) => {
    expect(allowed(uri)).toBe(false);
  });

  it('parses what it allows to the very text registered, so the code goes where the entry says', () => {
    for (const uri of ['https://chatgpt.com/connector/oauth/abc', 'http://127.0.0.1:33418/callback', 'https://claude.ai/api/mcp/auth_callback']) {
      expect(parseRedirectUri(uri)?.href).toBe(uri);
    }
    // An empty path stands for "/", the one rewrite the parser may make.
    expect(parseRedirectUri('http://localhost:6274')?.href).toBe('http://localhost:6274/');
  });

  it('matches a configured wildcard by origin and path segments', () => {
    const list = ['https://app.example/oauth/*'];
    expect(redirectAllowed('https://app.example/oauth/done', list)).toBe(true);
    expect(redirectAllowed('https://app.example/oauth', list)).toBe(false);
    expect(redirectAllowed('https://app.example/oauth-evil/done', list)).toBe(false);
    expect(redirectAllowed('https://sub.app.example/oauth/done', list)).toBe(false);
    expect(redirectAllowed('https://app.example/oauth/done', [])).toBe(false);
  });

  it('matches a requested redirect to a registered one exactly, except a loopback port (RFC 8252 §7.3)', () => {
    const registered = 'http://127.0.0.1:33418/callback';
    expect(redirectMatches(registered, registered)).toBe(true);
    expect(redirectMatches(registered, 'http://127.0.0.1:50123/callback')).toBe(true);
    expect(redirectMatches(registered, 'http://127.0.0.1/callback')).toBe(true);
    for (const other of ['http://127.0.0.1:50123/callback/', 'http://localhost:33418/callback', 'http://127.0.0.1:50123/callback?x=1', 'http://127.0.0.1:5/cb/../callback']) {
      expect(redirectMatches(registered, other), other).toBe(false);
    }
    expect(redirectMatches('https://claude.ai/api/mcp/auth_callback', 'https://claude.ai:8443/api/mcp/auth_callback')).toBe(false);
  });
});
