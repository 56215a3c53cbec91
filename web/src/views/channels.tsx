export function ChannelsView() { return <p>Coming soon.</p>; }
