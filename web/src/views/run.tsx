export function RunPage(_props: { slug: string; runId: number }) { return <p>Coming soon.</p>; }
