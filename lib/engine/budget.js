'use strict';
// The machine budget as a pool meets it: joining it (or hearing once why
// not) and the shape of `stats().budget`. The protocol is the core's
// (crates/core/src/budget/README.md).

const { binding } = require('../addon/binding');

/** Whether the machine budget's fallback was reported (once per process). */
let budgetFallbackReported = false;

/**
 * Joins the machine's budget for a pool that asks for it. When it cannot
 * be had, the pool runs on its own budget, as without the option, and the
 * process hears why once (a warning, code TIDEPOOL_BUDGET_UNAVAILABLE).
 */
function joinMachineBudget() {
  const reason = binding.openMachineBudget();
  if (reason === null) return true;
  if (!budgetFallbackReported) {
    budgetFallbackReported = true;
    process.emitWarning(
      `tidepool: budget 'machine' is unavailable (${reason}); pools run on their own budget`,
      { code: 'TIDEPOOL_BUDGET_UNAVAILABLE' },
    );
  }
  return false;
}

/** `stats().budget` from the native numbers. */
function budgetStats(b) {
  return {
    capacity: b.capacity,
    held: b.held,
    waiting: b.waiting,
    waits: b.waits,
    waitMs: b.waitSeconds * 1000,
    machine: { processes: b.machineProcesses, held: b.machineHeld },
  };
}

module.exports = { joinMachineBudget, budgetStats };
