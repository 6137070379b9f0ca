'use strict';
// Shared by the probes: one round of the article's contract, every message
// posted with postMessage() and the round over at its last 'message'.

function messageRound(pool, msgs) {
  return new Promise((resolve) => {
    let left = msgs.length;
    const on = () => {
      if (--left === 0) {
        pool.off('message', on);
        resolve();
      }
    };
    pool.on('message', on);
    for (const m of msgs) pool.postMessage(m);
  });
}

module.exports = { messageRound };
