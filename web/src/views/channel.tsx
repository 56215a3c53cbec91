export function ChannelPage(_props: { id: number }) { return <p>Coming soon.</p>; }
