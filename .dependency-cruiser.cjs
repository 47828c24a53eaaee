/**
 * The layer rules of the hexagonal architecture (README; each rule's comment says what it forbids).
 * `npm run lint` fails when a file imports across a forbidden line.
 */
module.exports = {
  forbidden: [
    {
      name: 'domain-is-pure',
      comment: 'src/domain imports nothing from npm, node built-ins or other layers.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { pathNot: '^src/domain/' }
    },
    {
      name: 'application-depends-on-domain-only',
      comment:
        'src/application imports domain only (plus inversify, reflect-metadata, node:events and two pure in-memory libraries without I/O: @casl/ability for rules, dataloader for batching in resolvers).',
      severity: 'error',
      from: { path: '^src/application/' },
      to: {
        pathNot:
          '^(src/domain/|src/application/|node_modules/(inversify|reflect-metadata|@inversifyjs|@casl/ability|dataloader)/|events$)'
      }
    },
    {
      name: 'infrastructure-not-interfaces',
      comment: 'Driven adapters never import driving adapters.',
      severity: 'error',
      from: { path: '^src/infrastructure/' },
      to: { path: '^src/interfaces/' }
    },
    {
      name: 'infrastructure-not-application',
      comment:
        'Driven adapters implement domain ports and never build on application use cases. Putting an adapter together with one (the RethinkDB service() façade: AdapterService over RethinkDbStore) is composition, done in src/container.ts or a library entry (src/library).',
      severity: 'error',
      from: { path: '^src/infrastructure/' },
      to: { path: '^src/application/' }
    },
    {
      name: 'adapters-are-independent',
      comment:
        'An adapter folder src/infrastructure/<name>/ (memory, rethinkdb, postgres, auth, metrics, …) never imports another one, so each can be swapped or deleted alone. Shared by all, and the only exceptions: src/infrastructure/config/ (settings, the StoreModule type) and src/infrastructure/store-commons/ (what several stores share), reached through its faces, store-commons/index.ts and the index.ts of its folders (event-log/, history/, keyed-writes/). The reference query evaluator is in src/domain/query.',
      severity: 'error',
      from: { path: '^src/infrastructure/([^/]+)/' },
      to: {
        path: '^src/infrastructure/',
        pathNot:
          '^src/infrastructure/($1/|config/|store-commons/index\\.ts$|store-commons/event-log/index\\.ts$|store-commons/history/index\\.ts$|store-commons/keyed-writes/index\\.ts$)'
      }
    },
    {
      name: 'interfaces-not-infrastructure',
      comment: 'Driving adapters reach stores, hashers and tokens through ports, never directly.',
      severity: 'error',
      from: { path: '^src/interfaces/' },
      to: { path: '^src/infrastructure/' }
    },
    {
      name: 'transports-use-the-seam',
      comment:
        'Driving adapters reach the application only through its public seam, src/application/transport/index.ts (Gateway, App type, …).',
      severity: 'error',
      from: { path: '^src/interfaces/' },
      to: { path: '^src/application/', pathNot: '^src/application/transport/index\\.ts$' }
    },
    {
      name: 'client-is-browser-safe',
      comment:
        "Client code runs in browsers: domain and its own folder only; no npm, no node built-ins (its schema types are the domain's SchemaType).",
      severity: 'error',
      from: { path: '^src/interfaces/client/' },
      to: { pathNot: '^(src/domain/|src/interfaces/client/)' }
    },
    {
      name: 'services-are-application-code',
      comment:
        "src/services and src/hooks (the app's own services and hooks) use domain and application; adapters and transports are chosen by the composition root.",
      severity: 'error',
      from: { path: '^src/(services|hooks)/' },
      to: { path: '^src/(infrastructure/|interfaces/|container\\.ts$|main\\.ts$|reference-app\\.ts$)' }
    },
    {
      name: 'core-does-not-know-services',
      comment:
        "domain, application, infrastructure, interfaces and the library entries never import the app's own services (they are plugged in by src/reference-app.ts).",
      severity: 'error',
      from: { path: '^src/(domain|application|infrastructure|interfaces|library)/' },
      to: { path: '^src/(services|hooks)/' }
    },
    {
      name: 'adapters-chosen-in-composition-root',
      comment:
        "Only the composition roots import infrastructure from outside it: src/container.ts and src/main.ts for the server, the modules' wiring files (src/modules), src/library for a project that depends on plumage (the package's entries).",
      severity: 'error',
      from: {
        path: '^src/',
        pathNot: '^(src/infrastructure/|src/library/|src/modules/|src/container\\.ts$|src/main\\.ts$)'
      },
      to: { path: '^src/infrastructure/' }
    },
    {
      name: 'modules-load-through-the-registry',
      comment:
        "A module's wiring file (src/modules/<name>.ts) is imported by nothing but the registry's import() (src/modules/index.ts): configuration selects it, nothing names it.",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/modules/index\\.ts$' },
      to: { path: '^src/modules/', pathNot: '^src/modules/(index|module)\\.ts$' }
    },
    {
      name: 'library-entries-are-outermost',
      comment: 'Nothing in plumage imports its package entries (src/library): they only gather what a project may use.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/library/' },
      to: { path: '^src/library/' }
    },
    {
      name: 'application-kernel-one-way',
      comment:
        'The app, its registry, hooks, events and gateway import each other one way (app.ts on top), type imports included: the parts call back into the app through AppCore, hooks see it as HookApp.',
      severity: 'error',
      from: { path: '^src/application/([^/]+\\.ts$|transport/)' },
      to: { circular: true }
    },
    {
      name: 'testing-is-a-kit-over-the-core',
      comment:
        'src/testing (the adapter kit) checks adapters through the ports: domain and application only, never an adapter.',
      severity: 'error',
      from: { path: '^src/testing/' },
      to: { pathNot: '^src/(domain|application|testing)/' }
    },
    {
      name: 'only-tests-use-the-kit',
      comment: 'The adapter kit is for test suites: nothing in src imports it but its package entry (src/library).',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(testing|library)/' },
      to: { path: '^src/testing/' }
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } }
    }
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // A copy of the repository with node_modules linked in (test/scripts) resolves packages as a clone does.
    preserveSymlinks: true,
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
      extensions: ['.ts', '.js']
    },
    builtInModules: { add: [] }
  }
}
