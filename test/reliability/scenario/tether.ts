/**
 * Loaded (`--import`) into every process the scenario starts: the process ends when the scenario's
 * end of its stdin closes, so a scenario that dies (a test runner killing its worker on a timeout)
 * leaves no driver or agent running behind it.
 */
process.stdin.on('end', () => process.kill(process.pid, 'SIGKILL'));
process.stdin.on('error', () => process.kill(process.pid, 'SIGKILL'));
process.stdin.resume();
