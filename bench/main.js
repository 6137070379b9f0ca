'use strict';
/**
 * Entry point shared by the benchmark scripts: `node script --child NAME`
 * runs one measurement and prints its JSON on the last line; without
 * `--child` the script is the parent that spawns children and reports.
 */
function main(child, parent) {
  const at = process.argv.indexOf('--child');
  const run =
    at !== -1 ? child(process.argv[at + 1]).then((r) => console.log(JSON.stringify(r))) : parent();
  run.catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

module.exports = { main };
