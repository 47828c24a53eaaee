import { pgDriver } from './pg-driver.js'
import { identifier, type PostgresDatabase } from './postgres-database.js'

/** The channel every instance LISTENs on; a NOTIFY on it says "the log has new rows". */
export const CHANNEL = 'plumage_events'

/**
 * The writing half of the PostgreSQL event log (PostgresEventLog follows, delivers and prunes): the
 * log table and the trigger function that fills it in each write's own transaction, the triggers of a
 * store table, the rows of custom events, and the NOTIFY that wakes the other instances after a commit.
 */
export class PostgresEventLogWrites {
  private notifying?: Promise<void>
  private notifyAgain = false

  constructor(private readonly db: PostgresDatabase) {}

  /** The statements that make `table`'s triggers log its changes (run by the store's setup, under the schema lock). */
  triggers(table: string): string[] {
    const name = (event: string) => identifier(`${table}_plumage_${event}`)
    const quoted = identifier(table)
    const literal = pgDriver().escapeLiteral(table)
    return [
      ...this.schema(),
      `CREATE OR REPLACE TRIGGER ${name('created')} AFTER INSERT ON ${quoted} REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION plumage_log_changes(${literal}, 'created')`,
      `CREATE OR REPLACE TRIGGER ${name('patched')} AFTER UPDATE ON ${quoted} REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION plumage_log_changes(${literal}, 'patched')`,
      `CREATE OR REPLACE TRIGGER ${name('removed')} AFTER DELETE ON ${quoted} REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION plumage_log_changes(${literal}, 'removed')`
    ]
  }

  /** Inserts a custom event's row (PostgresEventLog.publish then reads and notifies). */
  async publish(table: string, event: string, record: unknown, trace?: string): Promise<void> {
    await this.db.query(
      `publish ${table} ${event}`,
      'INSERT INTO plumage_events (service, event, record, trace) VALUES ($1, $2, $3::jsonb, $4)',
      [table, event, JSON.stringify(record ?? null), trace ?? null]
    )
  }

  /**
   * Wakes the other instances after a write committed, with one NOTIFY of its own. A NOTIFY inside the
   * write's transaction would take the notification queue's lock at commit and serialize every
   * committing writer; outside it, writers commit in parallel, and notifications that pile up while
   * one is being sent go out as one.
   */
  notify(): void {
    if (this.notifying) {
      this.notifyAgain = true
      return
    }
    // A NOTIFY commits a transaction of its own; nothing in it needs to be durable (a lost wake-up is
    // made up by the next one or the poll), so it does not wait for the WAL flush a durable commit waits for.
    this.notifying = this.db
      .query(
        'notify the event log',
        `SELECT set_config('synchronous_commit', 'off', true), pg_notify('${CHANNEL}', '')`
      )
      .then(
        () => undefined,
        // The others read every few seconds anyway.
        () => undefined
      )
      .finally(() => {
        this.notifying = undefined
        if (this.notifyAgain) {
          this.notifyAgain = false
          this.notify()
        }
      })
  }

  /** The log table, its epoch row and the trigger function (idempotent: every setup runs them under the lock). */
  schema(): string[] {
    return [
      `CREATE TABLE IF NOT EXISTS plumage_events (
         tx xid8 NOT NULL DEFAULT pg_current_xact_id(),
         id bigint GENERATED ALWAYS AS IDENTITY,
         at bigint NOT NULL DEFAULT (extract(epoch FROM clock_timestamp()) * 1000)::bigint,
         service text NOT NULL,
         event text NOT NULL,
         record jsonb,
         trace text,
         PRIMARY KEY (tx, id))`,
      'CREATE INDEX IF NOT EXISTS plumage_events_at ON plumage_events USING brin (at)',
      'CREATE TABLE IF NOT EXISTS plumage_meta (name text PRIMARY KEY, value text NOT NULL)',
      "INSERT INTO plumage_meta (name, value) VALUES ('events epoch', substr(md5(gen_random_uuid()::text), 1, 12)) ON CONFLICT DO NOTHING",
      `CREATE OR REPLACE FUNCTION plumage_log_changes() RETURNS trigger LANGUAGE plpgsql AS $body$
       BEGIN
         INSERT INTO plumage_events (service, event, record, trace)
           SELECT TG_ARGV[0],
                  CASE WHEN TG_ARGV[1] = 'patched'
                       THEN coalesce(nullif(current_setting('plumage.event', true), ''), 'patched')
                       ELSE TG_ARGV[1] END,
                  changed.doc,
                  nullif(current_setting('plumage.trace', true), '')
           FROM changed;
         -- The store notifies after its commit (notifying at commit serializes committing writers);
         -- writes made outside plumage notify here.
         IF FOUND AND current_setting('plumage.writer', true) IS DISTINCT FROM 'store' THEN
           PERFORM pg_notify('${CHANNEL}', '');
         END IF;
         RETURN NULL;
       END $body$`
    ]
  }
}
