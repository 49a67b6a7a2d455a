/** Files the build emits as hashed assets (web/build.ts `loader`): importing one gives its URL. */
declare module '*.geojson' {
  const url: string;
  export default url;
}
