'use strict';
// The engine's own functions, as they were when tidepool loaded.
//
// The threat model, stated once: code in the same realm (a polyfill, a
// test's fakes, a library that shims globals, a hostile dependency) may
// replace globals and prototype members after tidepool has loaded:
// `Promise`, `Array.isArray`, `Map.prototype.get`, a getter of
// `ArrayBuffer.prototype` or `AbortSignal.prototype`,
// `EventTarget.prototype.addEventListener`. What tidepool checks, and how
// it settles tasks, must not change with them. So a module takes what it
// calls from here (or captures it at its own load, beside its use), and
// calls a method through `uncurryThis` rather than on the object. What was
// replaced before tidepool loaded is the environment it runs in, and is
// not guarded against.

const call = Function.prototype.call;
const bind = Function.prototype.bind;

/** `fn` as a function of its receiver: `uncurryThis(f)(obj, ...args)` is `f.call(obj, ...args)`, whatever `call` becomes. */
const uncurryThis = (fn) => Reflect.apply(bind, call, [fn]);

/** The getter of `proto[key]` as a function of its receiver, or undefined when the property has none. */
function getter(proto, key) {
  const get = Reflect.getOwnPropertyDescriptor(proto, key)?.get;
  return get === undefined ? undefined : uncurryThis(get);
}

/** The Promise of this realm at load. */
const NativePromise = Promise;
/** `promise.then(onFulfilled, onRejected)` with the engine's `then`. */
const promiseThen = uncurryThis(Promise.prototype.then);

module.exports = { uncurryThis, getter, NativePromise, promiseThen };
