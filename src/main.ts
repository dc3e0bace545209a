import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { AppConfig, ConfigError, loadConfig } from './config/config';
import { developmentSecrets } from './config/development-secrets';
import { ApiExceptionFilter } from './infrastructure/http/api-exception.filter';
import { HttpEdgeAdapter } from './infrastructure/http/http-edge.adapter';
import { AppLogger } from './infrastructure/logging/app-logger';
import { logLines } from './infrastructure/logging/log-lines';
import { Metrics } from './infrastructure/metrics/metrics';
import { chooseDatabase } from './infrastructure/postgres/embedded/local-database';
import { watchLauncher } from './infrastructure/process/launcher-watch';
import { listeningAddress } from './observability';
import { StartupError } from './shared/startup-error';
import { checkBeforeStart } from './startup-checks';

export async function bootstrap(config: AppConfig) {
  const logger = new AppLogger({ format: config.logFormat, level: config.logLevel });
  Logger.overrideLogger(logger);
  await checkBeforeStart(config);
  const metrics = new Metrics();
  const app = await NestFactory.create(AppModule.forRoot(config, metrics), new HttpEdgeAdapter(config, metrics), {
    bodyParser: false,
    logger,
    // Throw start-up errors to the caller instead of exiting the process.
    abortOnError: false,
  });
  // Only the signals that mean "stop": SIGUSR2 and friends are left to profilers and debuggers.
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  app.useGlobalFilters(new ApiExceptionFilter());
  app.getHttpAdapter().getInstance().disable('x-powered-by');
  // No query parsing: nothing reads req.query. The back office reads its query strings itself, once
  // (back-office/http/query-string.ts), and the merchant API refuses them.
  app.getHttpAdapter().getInstance().set('query parser', false);
  await app.listen(config.port, config.host);
  return app;
}

async function main() {
  let loaded: ReturnType<typeof loadConfig>;
  // Development keeps generated secrets in DATA_DIR across restarts.
  const secrets = developmentSecrets(process.env);
  try {
    loaded = loadConfig(secrets.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(78); // EX_CONFIG
    }
    throw error;
  }
  Logger.overrideLogger(new AppLogger({ format: loaded.config.logFormat, level: loaded.config.logLevel }));
  const logger = new Logger('Main');
  // The crash's stack as a fatal line, written before the process exits (log-destination.ts), in the log's own format.
  process.once('uncaughtException', (error) => {
    logger.fatal(error);
    process.exit(1);
  });
  for (const warning of loaded.warnings) logger.warn(warning);
  // Stopped through npm's pid, the service must not live on as an orphan: it stops as on SIGTERM.
  watchLauncher((why) => {
    logger.warn(`${why}: stopping`);
    process.kill(process.pid, 'SIGTERM');
  });
  const refuse = (error: unknown): never => {
    if (!(error instanceof StartupError)) throw error;
    logger.error(error.message);
    process.exit(error.exitCode);
  };
  for (const note of await secrets.save()) logger.log(note);
  // A configured database, else a local one, else (development) an embedded one.
  const { database, summary } = await chooseDatabase(loaded.config.database, loaded.config.production).catch(refuse);
  logger.log(summary);
  const app = await bootstrap({ ...loaded.config, database }).catch(refuse);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.prependOnceListener(signal, () => {
      logLines.stopBuffering();
      logger.log(
        `${signal}: stopping. Waiting for the requests in flight, the fulfilment and callback jobs in flight and the projection batch under way, then closing the database connections`,
      );
    });
  }
  logger.log(`listening on ${listeningAddress(app.getHttpServer())}; event store: ${loaded.config.eventStore}`);
}

if (require.main === module) {
  main().catch((error) => {
    new Logger('Main').fatal(error);
    process.exit(1);
  });
}
