/** Where the access token is kept: `window.localStorage` fits, as does anything with these methods (sync or async). */
export interface TokenStorage {
  getItem(key: string): string | null | undefined | Promise<string | null | undefined>
  setItem(key: string, value: string): unknown
  removeItem(key: string): unknown
}

/** The default storage: the token lives as long as the page (or process). */
export class MemoryStorage implements TokenStorage {
  private readonly items = new Map<string, string>()

  getItem(key: string): string | null {
    return this.items.get(key) ?? null
  }

  setItem(key: string, value: string): void {
    this.items.set(key, value)
  }

  removeItem(key: string): void {
    this.items.delete(key)
  }
}
