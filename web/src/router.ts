import { useEffect, useState } from 'preact/hooks';

/**
 * Hash routes (`#/participants`): the service's own root-level paths (SMP lookups such as
 * `/iso6523-actorid-upis::0192:987654325`) can never collide with a page of the console.
 */
export function currentRoute(): string[] {
  return location.hash
    .replace(/^#\/?/, '')
    .split('/')
    .filter((part) => part !== '')
    .map(decodeURIComponent);
}

export function useRoute(): string[] {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const changed = () => setRoute(currentRoute());
    addEventListener('hashchange', changed);
    // The hash may have changed between the first render and this effect, with nobody listening yet.
    changed();
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}

export const href = (...parts: string[]) => `#/${parts.map(encodeURIComponent).join('/')}`;

export function navigate(...parts: string[]): void {
  location.hash = href(...parts);
}
