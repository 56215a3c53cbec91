export function LoopsView() { return <p>Coming soon.</p>; }
