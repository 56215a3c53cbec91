export function LoopPage(_props: { slug: string }) { return <p>Coming soon.</p>; }
