import Fastify from 'fastify';

/** Baseline: fastify hello world (no logger, no plugins), the ceiling of any fastify route here. */
const app = Fastify();
app.get('/', async () => ({ hello: 'world' }));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
