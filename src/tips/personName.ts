import { Disposable, type IDisposable } from '../common/lifecycle';

// Who a person's tip edit is by: their VS Code account's name when they are signed in, asked
// for silently (never a sign-in prompt, nor a badge on the Accounts menu), else nobody named, and
// the host records "you" (memory.py UNNAMED_PERSON). vscode-free: it takes the part of
// `vscode.authentication` it uses, so unit tests can hand it a stand-in.

/** The part of `vscode.authentication` used here. */
export interface Authentication {
  getSession(
    providerId: string,
    scopes: readonly string[],
    options: { silent: true },
  ): Thenable<{ readonly account: { readonly label: string } } | undefined>;
  readonly onDidChangeSessions: (
    listener: (event: { readonly provider: { readonly id: string } }) => unknown,
  ) => IDisposable;
}

/**
 * The providers VS Code has built in, each with the scope sets its common sessions hold (a
 * session is found only for the very scopes it was made with): GitHub's of settings sync, of
 * the GitHub extensions, and the bare profile; Microsoft's of settings sync and of sign-in.
 */
export const ACCOUNT_PROVIDERS: ReadonlyArray<{
  readonly id: string;
  readonly scopeSets: readonly (readonly string[])[];
}> = [
  {
    id: 'github',
    scopeSets: [['user:email'], ['read:user', 'user:email', 'repo', 'workflow'], ['repo'], ['read:user']],
  },
  {
    id: 'microsoft',
    scopeSets: [
      ['openid', 'profile', 'email', 'offline_access'],
      ['openid', 'profile'],
    ],
  },
];

/** The signed-in account's name, asked for silently; undefined when none is signed in (or shared). */
export async function accountName(auth: Pick<Authentication, 'getSession'>): Promise<string | undefined> {
  for (const provider of ACCOUNT_PROVIDERS) {
    for (const scopes of provider.scopeSets) {
      try {
        const label = (await auth.getSession(provider.id, scopes, { silent: true }))?.account.label.trim();
        if (label) {
          return label;
        }
      } catch {
        // The provider is not there (code-server has no Microsoft sign-in): try the next one.
      }
    }
  }
  return undefined;
}

const LOOKUP_WAIT_MS = 2_000;

/** The name to send as the author of a person's edits, kept current as they sign in and out. */
export class PersonName extends Disposable {
  private name: string | undefined;
  private lookup: Promise<void>;

  constructor(private readonly auth: Authentication) {
    super();
    this.lookup = this.refresh();
    this._register(
      auth.onDidChangeSessions(({ provider }) => {
        if (ACCOUNT_PROVIDERS.some((p) => p.id === provider.id)) {
          this.lookup = this.refresh();
        }
      }),
    );
  }

  /**
   * The account's name, or undefined for the host's "you". A save waits at most LOOKUP_WAIT_MS
   * for a lookup under way (a provider may be slow to answer); then the last name known is used.
   */
  async current(): Promise<string | undefined> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.lookup, new Promise<void>((resolve) => (timer = setTimeout(resolve, LOOKUP_WAIT_MS)))]);
    clearTimeout(timer);
    return this.name;
  }

  private async refresh(): Promise<void> {
    const name = await accountName(this.auth);
    if (!this.isDisposed) {
      this.name = name;
    }
  }
}
