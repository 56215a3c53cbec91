export function RunnersView() { return <p>Coming soon.</p>; }
export function RunnerPage(_props: { id: number }) { return <p>Coming soon.</p>; }
