// esbuild.mjs loads .css files imported by webview code as text (lit adopts them into shadow roots).
declare module '*.css' {
  const text: string;
  export default text;
}
