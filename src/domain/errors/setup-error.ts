/**
 * A definition the app was given cannot be used (a bad rule): found while the app is put together, and reported
 * at startup in one line, as a configuration error is. Modules derive their own (RulesError).
 */
export class SetupError extends Error {}
