# The plumage reference app. Build: docker build -t plumage .
# Run:   docker run -p 3030:3030 -e AUTH_SECRET=$(openssl rand -hex 32) plumage   (or docker compose up, see README)

# Build stage: every dependency (TypeScript, esbuild, socket.io-client for the chat bundle), then
# `npm run build` = type-check, dist/plumage.mjs (the server bundle) + public/app.js (the chat page's script).
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY public ./public
RUN npm run build

# Runtime stage: production dependencies only, the compiled server and the static chat page.
FROM node:20-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3030
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist/plumage.mjs /app/dist/plumage.mjs.map ./dist/
COPY --from=build /app/dist/chunks ./dist/chunks
COPY --from=build /app/public ./public
# The image's unprivileged user; the app writes nothing to disk.
USER node
EXPOSE 3030
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s \
  CMD node -e "fetch('http://127.0.0.1:' + process.env.PORT + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
CMD ["node", "dist/plumage.mjs"]
