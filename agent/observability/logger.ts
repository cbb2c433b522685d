import type { LevelWithSilent } from 'pino';
import { createLogger, type Logger } from '../../shared/log.ts';
import type { LoggingConfig, LogLevel } from '../config/schema.ts';

export type { Logger } from '../../shared/log.ts';

export interface AgentLogger {
  /** The root logger; every line carries `agentId`. */
  readonly logger: Logger;
  /** Applies a new level to the root and to every child logger made from it (config reload). */
  setLevel(level: LogLevel | LevelWithSilent): void;
}

/** The agent's logger as `logging.*` says: file or stdout, text or json, level. */
export function createAgentLogger(logging: LoggingConfig, agentId: string): AgentLogger {
  // pino children copy their level when made, so a level change has to reach each of them.
  const children = new Set<WeakRef<Logger>>();
  const logger = createLogger({
    level: logging.level,
    format: logging.format,
    file: logging.file,
    base: { agentId },
    onChild: (child) => children.add(new WeakRef(child)),
  });
  return {
    logger,
    setLevel(level) {
      logger.level = level;
      for (const ref of children) {
        const child = ref.deref();
        if (child === undefined) children.delete(ref);
        else child.level = level;
      }
    },
  };
}

/** Lines about one account carry its name. */
export function accountLogger(logger: Logger, account: string): Logger {
  return logger.child({ account });
}
