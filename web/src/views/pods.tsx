export function PodsView() { return <p>Coming soon.</p>; }
