/**
 * `fallback` as an object whose every property is read, at each use, from `current()` when that gives one (methods bound
 * to it), else from `fallback`: one decorator (`app.db`, `app.catalogue`, ...) that stands for what the request in
 * progress works with, without the code that uses it knowing there is a choice.
 */
export function contextual<T extends object>(fallback: T, current: () => T | undefined): T {
  return new Proxy(fallback, {
    get(target, property) {
      const chosen = current() ?? target;
      const value: unknown = Reflect.get(chosen, property, chosen);
      return typeof value === 'function' ? value.bind(chosen) : value;
    },
  });
}
