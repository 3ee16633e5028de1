/**
 * Runs a bench script's entry and ends the process with its outcome: a finished bench must not
 * be kept alive by what it opened (pools, agents, servers it left to the exit), and a failed one
 * exits 1 with its error printed.
 */
export function runMain(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
