import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { AppConfig, ConfigError, loadConfig } from './config/config';
import { developmentSecrets } from './config/development-secrets';
import { ApiExceptionFilter } from './infrastructure/http/api-exception.filter';
import { HttpEdgeAdapter } from './infrastructure/http/http-edge.adapter';
import { chooseDatabase } from './infrastructure/postgres/embedded/local-database';
import { StartupError } from './shared/startup-error';
import { checkBeforeStart } from './startup-checks';

export async function bootstrap(config: AppConfig) {
  await checkBeforeStart(config);
  const app = await NestFactory.create(AppModule.forRoot(config), new HttpEdgeAdapter(config), {
    bodyParser: false,
    logger: ['log', 'warn', 'error'],
    // Throw start-up errors to the caller instead of exiting the process.
    abortOnError: false,
  });
  // Only the signals that mean "stop": SIGUSR2 and friends are left to profilers and debuggers.
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  app.useGlobalFilters(new ApiExceptionFilter());
  app.getHttpAdapter().getInstance().disable('x-powered-by');
  await app.listen(config.port, '0.0.0.0');
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
  const logger = new Logger('Main');
  for (const warning of loaded.warnings) logger.warn(warning);
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
  logger.log(`listening on ${await app.getUrl()} (event store: ${loaded.config.eventStore})`);
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
