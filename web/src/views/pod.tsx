export function PodPage(_props: { podKey: string }) { return <p>Coming soon.</p>; }
