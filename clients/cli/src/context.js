// What every command gets: the settings in force (profile.js), the output, and the SDK client built
// from them on first use.
import { SigilClient } from '../../js/src/index.js';
import { fetchTrusting } from './https_fetch.js';
import { resolveSettings, readApiKey } from './profile.js';
import { CliError } from './output.js';

export class Context {
  constructor(flags, out) {
    this.flags = flags;
    this.out = out;
    this.settings = resolveSettings(flags);
    this.#fetch = this.settings.ca_file ? fetchTrusting(this.settings.ca_file) : globalThis.fetch;
  }

  #fetch;
  #client = null;

  get fetch() { return this.#fetch; }

  /// The SDK client; `needKey` makes a missing key an error with its fix.
  client({ needKey = true } = {}) {
    const apiKey = readApiKey(this.settings);
    if (needKey && !apiKey) {
      throw new CliError('missing_api_key', 'this command needs an API key and none is configured',
        'create an account: sigil account create --save-key ~/.sigil-key (it becomes the profile\'s key), or sigil profile set --key-file FILE, or export SIGIL_API_KEY=...');
    }
    if (!this.#client) this.#client = new SigilClient({ baseUrl: this.settings.url, apiKey, fetch: this.#fetch });
    return this.#client;
  }
}
