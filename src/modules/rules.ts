import { useRules } from '../application/rules/index.js'
import { rules } from '../services/rules.js'
import type { PlumageModule } from './module.js'

/**
 * Rules (README "Rules", ADR 0018): who may do and see what, in calls, queries and every event, from the app's
 * definitions (src/services/rules.ts, one `<name>.rules.ts` per guarded service). Always on while it is here;
 * deleting it leaves every logged-in user seeing everything, as an app without rules does. The definitions then
 * apply nowhere: delete them too, or keep them for a rules module of your own.
 */
export const module: PlumageModule = {
  extend(app) {
    // After the services and the authentication service: the rules check each guarded service's schemas.
    useRules(app, rules)
  }
}
