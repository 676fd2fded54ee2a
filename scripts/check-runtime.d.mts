/** Why this runtime is not the project's, or undefined when it is. */
export function runtimeProblem(): string | undefined;
